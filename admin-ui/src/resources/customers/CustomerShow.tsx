/**
 * A customer: details, current state (active subscriptions, granted benefits), orders and
 * subscriptions, and a customer portal session link to send them.
 */
import { useMemo, useState } from 'react';
import {
  DataTable,
  DeleteButton,
  EditButton,
  FunctionField,
  Labeled,
  ReferenceManyField,
  Show,
  TabbedShowLayout,
  TextField,
  TopToolbar,
  useGetList,
  useNotify,
  useRecordContext,
} from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import { Alert, Box, Button, Chip, Stack, Typography } from '@mui/material';
import LaunchIcon from '@mui/icons-material/Launch';
import { api } from '../../common/api.ts';
import { benefitTypeName } from '../../common/choices.ts';
import { CopyButton } from '../../common/CopyButton.tsx';
import { DateTimeField, MoneyField, formatDate, formatMoney } from '../../common/money.tsx';
import { StatusField } from '../../common/StatusChip.tsx';

export interface Customer {
  id: string;
  email: string;
  name: string | null;
  external_id: string | null;
  created_at: string;
  billing_address: Record<string, string | null> | null;
  tax_id: [string, string | null] | null;
  metadata: Record<string, unknown>;
}

interface CustomerState extends Customer {
  active_subscriptions: { id: string; amount: number; currency: string; recurring_interval: string; product_id: string; current_period_end: string | null }[];
  granted_benefits: { id: string; benefit_id: string; benefit_type: string; granted_at: string; properties: Record<string, unknown> }[];
}

const PortalSessionButton = () => {
  const customer = useRecordContext<Customer>();
  const notify = useNotify();
  const [url, setUrl] = useState<string | null>(null);
  if (!customer) return null;
  const create = async () => {
    try {
      const s = await api<{ customer_portal_url: string }>('/v1/customer-sessions/', { body: { customer_id: customer.id } });
      setUrl(s.customer_portal_url);
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Could not create the session', { type: 'error' });
    }
  };
  return url ? (
    <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
      <Typography variant="body2" sx={{ maxWidth: 280, overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap' }} title={url}>
        {url}
      </Typography>
      <CopyButton value={url} what="Customer portal link" label="Copy portal link" />
    </Stack>
  ) : (
    <Button size="small" startIcon={<LaunchIcon />} onClick={() => void create()}>
      Create customer portal session
    </Button>
  );
};

const State = () => {
  const customer = useRecordContext<Customer>();
  const { data, error } = useQuery({
    queryKey: ['customer-state', customer?.id],
    queryFn: () => api<CustomerState>(`/v1/customers/${customer!.id}/state`),
    enabled: !!customer,
  });
  if (error) return <Alert severity="error">{error.message}</Alert>;
  if (!data) return null;
  return (
    <Stack spacing={2}>
      <Box>
        <Typography variant="subtitle2" component="h3">
          Active subscriptions
        </Typography>
        {data.active_subscriptions.length ? (
          data.active_subscriptions.map((s) => (
            <Typography key={s.id} variant="body2">
              <Link to={`/subscriptions/${s.id}/show`}>
                {formatMoney(s.amount, s.currency)} / {s.recurring_interval}
              </Link>{' '}
              — renews {formatDate(s.current_period_end)}
            </Typography>
          ))
        ) : (
          <Typography variant="body2">None</Typography>
        )}
      </Box>
      <Box>
        <Typography variant="subtitle2" component="h3">
          Meter usage, last 30 days
        </Typography>
        <MeterUsage customerId={data.id} />
      </Box>
      <Box>
        <Typography variant="subtitle2" component="h3">
          Granted benefits
        </Typography>
        {data.granted_benefits.length ? (
          <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
            {data.granted_benefits.map((g) => (
              <Chip
                key={g.id}
                component={Link}
                to={`/benefits/${g.benefit_id}/show`}
                clickable
                label={`${benefitTypeName(g.benefit_type)}${g.properties.display_key ? `: ${String(g.properties.display_key)}` : ''} · since ${formatDate(g.granted_at, false)}`}
              />
            ))}
          </Stack>
        ) : (
          <Typography variant="body2">None</Typography>
        )}
      </Box>
    </Stack>
  );
};

/** Usage of each meter by this customer over the last 30 days (the API has no balance read model). */
const MeterUsage = ({ customerId }: { customerId: string }) => {
  const { data: meters } = useGetList<{ id: string; name: string }>('meters', { pagination: { page: 1, perPage: 20 }, sort: { field: 'name', order: 'ASC' } });
  const since = useMemo(() => new Date(Date.now() - 30 * 86400_000).toISOString(), []);
  const usage = useQuery({
    queryKey: ['customer-meter-usage', customerId, meters?.map((m) => m.id), since],
    enabled: !!meters?.length,
    queryFn: () =>
      Promise.all(
        meters!.map(async (m) => {
          const q = await api<{ quantities: { quantity: number }[] }>(`/v1/meters/${m.id}/quantities`, {
            query: { start_timestamp: since, end_timestamp: new Date().toISOString(), interval: 'month', customer_id: customerId },
          });
          return { meter: m, total: q.quantities.reduce((s, x) => s + x.quantity, 0) };
        }),
      ),
  });
  if (!meters?.length) return <Typography variant="body2">No meters.</Typography>;
  return (
    <Stack spacing={0.5}>
      {(usage.data ?? []).map(({ meter, total }) => (
        <Typography key={meter.id} variant="body2">
          <Link to={`/meters/${meter.id}/show`}>{meter.name}</Link>: {total.toLocaleString()}
        </Typography>
      ))}
    </Stack>
  );
};

export const CustomerShow = () => (
  <Show
    actions={
      <TopToolbar>
        <PortalSessionButton />
        <EditButton />
        <DeleteButton mutationMode="pessimistic" confirmTitle="Delete this customer?" confirmContent="Their subscriptions are revoked and their benefits taken back." />
      </TopToolbar>
    }
  >
    <TabbedShowLayout>
      <TabbedShowLayout.Tab label="Overview">
        <TextField source="email" />
        <TextField source="name" emptyText="—" />
        <TextField source="external_id" label="External ID" emptyText="—" />
        <FunctionField<Customer>
          label="Billing address"
          render={(c) => (c.billing_address ? [c.billing_address.line1, c.billing_address.line2, c.billing_address.postal_code, c.billing_address.city, c.billing_address.state, c.billing_address.country].filter(Boolean).join(', ') : '—')}
        />
        <FunctionField<Customer> label="Tax ID" render={(c) => (c.tax_id ? `${c.tax_id[0]}${c.tax_id[1] ? ` (${c.tax_id[1]})` : ''}` : '—')} />
        <FunctionField<Customer> label="Metadata" render={(c) => (Object.keys(c.metadata ?? {}).length ? Object.entries(c.metadata).map(([k, v]) => `${k}: ${String(v)}`).join(', ') : '—')} />
        <DateTimeField source="created_at" label="Customer since" />
        <Labeled label="Current state" fullWidth>
          <State />
        </Labeled>
      </TabbedShowLayout.Tab>
      <TabbedShowLayout.Tab label="Orders" path="orders">
        <ReferenceManyField reference="orders" target="customer_id" sort={{ field: 'created_at', order: 'DESC' }}>
          <DataTable bulkActionButtons={false} rowClick="show" empty={<Typography variant="body2">No orders.</Typography>}>
            <DataTable.Col source="created_at" label="Date" field={DateTimeField} />
            <DataTable.Col source="product" label="Product" render={(o: { product: { name: string } }) => o.product.name} />
            <DataTable.Col source="amount" field={MoneyField} />
            <DataTable.Col source="status" disableSort field={StatusField} />
          </DataTable>
        </ReferenceManyField>
      </TabbedShowLayout.Tab>
      <TabbedShowLayout.Tab label="Subscriptions" path="subscriptions">
        <ReferenceManyField reference="subscriptions" target="customer_id" sort={{ field: 'started_at', order: 'DESC' }}>
          <DataTable bulkActionButtons={false} rowClick="show" empty={<Typography variant="body2">No subscriptions.</Typography>}>
            <DataTable.Col source="product" label="Product" render={(s: { product: { name: string } }) => s.product.name} />
            <DataTable.Col source="amount" field={MoneyField} />
            <DataTable.Col source="status" field={StatusField} />
            <DataTable.Col source="started_at" label="Started" field={DateTimeField} />
          </DataTable>
        </ReferenceManyField>
      </TabbedShowLayout.Tab>
    </TabbedShowLayout>
  </Show>
);
