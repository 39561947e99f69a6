/**
 * Webhook endpoints: create (URL, format, events; the signing secret is shown once), edit, delete,
 * and each endpoint's deliveries with status code and response, with redelivery.
 */
import { useState } from 'react';
import {
  BooleanInput,
  CheckboxGroupInput,
  Create,
  CreateButton,
  DataTable,
  DeleteButton,
  Edit,
  EditButton,
  FunctionField,
  Labeled,
  List,
  SelectInput,
  Show,
  SimpleForm,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  required,
  useNotify,
  useRecordContext,
} from 'react-admin';
import { Alert, Box, Button, Chip, Stack, Typography } from '@mui/material';
import { useQueryClient } from '@tanstack/react-query';
import { useLocation } from 'react-router-dom';
import { api } from '../../common/api.ts';
import { ApiTable } from '../../common/ApiTable.tsx';
import { CopyButton } from '../../common/CopyButton.tsx';
import { DateTimeField, formatDate } from '../../common/money.tsx';
import { OpenInTemporal, anyOf } from '../../common/temporal.tsx';

export const EVENT_TYPES = [
  'checkout.created', 'checkout.updated',
  'customer.created', 'customer.updated', 'customer.deleted', 'customer.state_changed',
  'order.created', 'order.paid', 'order.updated', 'order.refunded',
  'subscription.created', 'subscription.updated', 'subscription.active', 'subscription.canceled',
  'subscription.uncanceled', 'subscription.revoked',
  'refund.created', 'refund.updated',
  'product.created', 'product.updated',
  'benefit.created', 'benefit.updated',
  'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked',
  'organization.updated',
];

const formats = [
  { id: 'raw', name: 'Raw JSON (Standard Webhooks signature)' },
  { id: 'discord', name: 'Discord' },
  { id: 'slack', name: 'Slack' },
];

interface Endpoint {
  id: string;
  url: string;
  format: string;
  secret: string;
  events: string[];
  enabled: boolean;
  created_at: string;
}

interface Delivery {
  id: string;
  created_at: string;
  succeeded: boolean;
  http_code: number | null;
  response: string | null;
  duration_ms: number;
  attempt: number;
  webhook_event: { id: string; type: string; payload: string; succeeded: boolean | null; last_http_code: number | null };
}

export const WebhookList = () => (
  <List actions={<TopToolbar><CreateButton label="Add endpoint" /></TopToolbar>} exporter={false} empty={false} title="Webhooks" sort={{ field: 'created_at', order: 'DESC' }}>
    <DataTable<Endpoint> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="url" label="URL" disableSort />
      <DataTable.Col source="format" disableSort />
      <DataTable.Col label="Events" render={(e) => `${e.events.length} event type${e.events.length === 1 ? '' : 's'}`} />
      <DataTable.Col source="enabled" disableSort render={(e) => (e.enabled ? 'Enabled' : 'Disabled')} />
      <DataTable.Col source="created_at" label="Created" disableSort field={DateTimeField} />
    </DataTable>
  </List>
);

const EventPicker = () => (
  <CheckboxGroupInput
    source="events"
    label="Events to send"
    choices={EVENT_TYPES.map((e) => ({ id: e, name: e }))}
    row={false}
    sx={{ '& .MuiFormGroup-root': { display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr', md: '1fr 1fr 1fr' } } }}
  />
);

export const WebhookCreate = () => (
  <Create redirect={(_r, id) => `webhook-endpoints/${id}/show?created=1`}>
    <SimpleForm defaultValues={{ format: 'raw', events: ['order.created', 'order.paid', 'subscription.created'] }}>
      <TextInput source="url" label="Endpoint URL" type="url" validate={required()} fullWidth helperText="We POST each event here" />
      <SelectInput source="format" label="Format" choices={formats} validate={required()} />
      <EventPicker />
    </SimpleForm>
  </Create>
);

export const WebhookEdit = () => (
  <Edit mutationMode="pessimistic" redirect="show">
    <SimpleForm>
      <TextInput source="url" label="Endpoint URL" type="url" validate={required()} fullWidth />
      <SelectInput source="format" label="Format" choices={formats} validate={required()} />
      <BooleanInput source="enabled" label="Enabled" />
      <EventPicker />
    </SimpleForm>
  </Edit>
);

const SecretOnce = () => {
  const endpoint = useRecordContext<Endpoint>();
  const created = new URLSearchParams(useLocation().search).has('created');
  const [shown, setShown] = useState(created);
  if (!endpoint) return null;
  return shown ? (
    <Alert severity="warning" sx={{ mb: 2 }} onClose={() => setShown(false)}>
      <Typography variant="body2" gutterBottom>
        Signing secret — keep it with your receiver to verify signatures. Copy it now.
      </Typography>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Box component="code" sx={{ wordBreak: 'break-all' }} aria-label="Signing secret">
          {endpoint.secret}
        </Box>
        <CopyButton value={endpoint.secret} what="Signing secret" label="Copy secret" />
      </Stack>
    </Alert>
  ) : (
    <Button size="small" onClick={() => setShown(true)}>
      Reveal signing secret
    </Button>
  );
};

/** What the receiver answered, as the API records it (status, content type, size; never the body). */
const Response = ({ delivery }: { delivery: Delivery }) => (
  <Box component="span" sx={{ fontSize: 13, wordBreak: 'break-word' }}>
    {delivery.response ?? '—'}
  </Box>
);

const Deliveries = () => {
  const endpoint = useRecordContext<Endpoint>();
  const notify = useNotify();
  const queryClient = useQueryClient();
  const [tick, setTick] = useState(0);
  if (!endpoint) return null;
  const redeliver = async (d: Delivery) => {
    try {
      await api(`/v1/webhooks/events/${d.webhook_event.id}/redeliver`, { method: 'POST', body: {} });
      notify(`${d.webhook_event.type} queued for redelivery`, { type: 'info' });
      await queryClient.invalidateQueries({ queryKey: ['api-table', '/v1/webhooks/deliveries'] });
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Redelivery failed', { type: 'error' });
    }
  };
  return (
    <Box sx={{ width: '100%' }}>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', flexWrap: 'wrap' }}>
        <Button size="small" onClick={() => setTick(tick + 1)}>
          Refresh deliveries
        </Button>
        {/* Retries run as webhook-delivery workflows carrying the endpoint's id (first attempts are batched by the dispatcher). */}
        <OpenInTemporal query={anyOf({ WebhookEndpointId: endpoint.id })} label="Open retries in Temporal" />
      </Stack>
      <ApiTable<Delivery>
        path="/v1/webhooks/deliveries"
        query={{ endpoint_id: endpoint.id }}
        caption="Deliveries"
        refreshKey={tick}
        empty="No deliveries yet: they appear when an event this endpoint listens to happens."
        columns={[
          { label: 'Date', render: (d) => formatDate(d.created_at) },
          { label: 'Event', render: (d) => d.webhook_event.type },
          { label: 'Status', render: (d) => <Chip size="small" variant="outlined" sx={{ color: d.succeeded ? '#1b5e20' : '#b71c1c', borderColor: 'currentColor' }} label={d.http_code ? `HTTP ${d.http_code}` : 'No response'} /> },
          { label: 'Attempt', render: (d) => String(d.attempt) },
          { label: 'Time', render: (d) => `${d.duration_ms} ms` },
          { label: 'Response', render: (d) => <Response delivery={d} /> },
          { label: 'Actions', render: (d) => <Button size="small" onClick={() => void redeliver(d)}>Redeliver</Button> },
        ]}
      />
    </Box>
  );
};

export const WebhookShow = () => (
  <Show actions={<TopToolbar><EditButton /><DeleteButton mutationMode="pessimistic" confirmTitle="Delete this endpoint?" confirmContent="No more events are sent to it." /></TopToolbar>}>
    <SimpleShowLayout>
      <SecretOnce />
      <TextField source="url" label="URL" />
      <TextField source="format" />
      <FunctionField<Endpoint> label="Status" render={(e) => (e.enabled ? 'Enabled' : 'Disabled')} />
      <FunctionField<Endpoint> label="Events" render={(e) => (e.events.length ? e.events.join(', ') : 'None')} />
      <DateTimeField source="created_at" label="Created" />
      <Labeled label="Deliveries" fullWidth>
        <Deliveries />
      </Labeled>
    </SimpleShowLayout>
  </Show>
);
