/**
 * Subscriptions: list (product, customer, discount, active filters; every sort key of the API), CSV
 * export, and a subscription page with its actions: cancel at period end (with a reason), uncancel,
 * revoke now, change product (with proration behaviour).
 */
import { useState } from 'react';
import {
  AutocompleteInput,
  Button as RaButton,
  DataTable,
  FilterButton,
  FunctionField,
  Labeled,
  List,
  NullableBooleanInput,
  ReferenceInput,
  ReferenceManyField,
  SelectInput,
  Show,
  SimpleShowLayout,
  TopToolbar,
  useGetList,
  useNotify,
  useRecordContext,
  useRefresh,
} from 'react-admin';
import { Link } from 'react-router-dom';
import {
  Alert,
  Button,
  Dialog,
  DialogActions,
  DialogContent,
  DialogContentText,
  DialogTitle,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import DownloadIcon from '@mui/icons-material/Download';
import { api } from '../../common/api.ts';
import { cancellationReasons, humanize } from '../../common/choices.ts';
import { DateTimeField, MoneyField, formatDate, formatMoney } from '../../common/money.tsx';
import { PhoneList, joined } from '../../common/PhoneList.tsx';
import { currentOrganizationId } from '../../common/organization.ts';
import { StatusField } from '../../common/StatusChip.tsx';
import { OpenInTemporal } from '../../common/temporal.tsx';

export interface Subscription {
  id: string;
  status: string;
  amount: number;
  currency: string;
  recurring_interval: 'month' | 'year';
  current_period_start: string;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  started_at: string | null;
  ends_at: string | null;
  ended_at: string | null;
  customer_id: string;
  product_id: string;
  customer_cancellation_reason: string | null;
  customer_cancellation_comment: string | null;
  customer: { email: string; name: string | null };
  product: { id: string; name: string };
  discount: { name: string } | null;
}

const ExportCsvButton = () => {
  const notify = useNotify();
  const onClick = async () => {
    try {
      const res = await fetch(`/v1/subscriptions/export?organization_id=${encodeURIComponent(currentOrganizationId() ?? '')}`, {
        credentials: 'include',
      });
      if (!res.ok) throw new Error(`Export failed (${res.status})`);
      const blob = await res.blob();
      const a = document.createElement('a');
      a.href = URL.createObjectURL(blob);
      a.download = 'subscriptions.csv';
      a.click();
      URL.revokeObjectURL(a.href);
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Export failed', { type: 'error' });
    }
  };
  return <RaButton label="Export CSV" onClick={() => void onClick()} startIcon={<DownloadIcon />} />;
};

const filters = [
  <NullableBooleanInput key="active" source="active" label="Active" alwaysOn />,
  <ReferenceInput key="product_id" source="product_id" reference="products" filter={{ is_recurring: true }} alwaysOn>
    <SelectInput optionText="name" label="Product" />
  </ReferenceInput>,
  <ReferenceInput key="customer_id" source="customer_id" reference="customers">
    <AutocompleteInput optionText="email" label="Customer" filterToQuery={(q) => ({ q })} />
  </ReferenceInput>,
  <ReferenceInput key="discount_id" source="discount_id" reference="discounts">
    <SelectInput optionText="name" label="Discount" />
  </ReferenceInput>,
];

const interval = (s: Subscription) => `${formatMoney(s.amount, s.currency)} / ${s.recurring_interval}`;
const renewsOrEnds = (s: Subscription) =>
  s.current_period_end && s.status !== 'canceled' ? `${s.cancel_at_period_end ? 'ends' : 'renews'} ${formatDate(s.current_period_end, false)}` : null;

// Sortable by customer, status, started_at, current_period_end, amount, product and discount.
export const SubscriptionList = () => (
  <List
    filters={filters}
    sort={{ field: 'started_at', order: 'DESC' }}
    actions={
      <TopToolbar>
        <FilterButton />
        <ExportCsvButton />
      </TopToolbar>
    }
    exporter={false}
  >
    <PhoneList<Subscription>
      primary={(s) => s.customer?.email ?? '—'}
      tertiary={interval}
      secondary={(s) => joined(s.product?.name, humanize(s.status), renewsOrEnds(s))}
    >
    <DataTable<Subscription> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="customer" label="Customer" render={(s) => s.customer?.email ?? '—'} />
      <DataTable.Col source="product" label="Product" render={(s) => s.product?.name ?? '—'} />
      <DataTable.Col source="amount" label="Amount" render={interval} />
      <DataTable.Col source="status" field={StatusField} />
      <DataTable.Col source="started_at" label="Started" field={DateTimeField} />
      <DataTable.Col source="current_period_end" label="Renews / ends" render={(s) => (s.cancel_at_period_end ? `Ends ${formatDate(s.current_period_end)}` : formatDate(s.current_period_end))} />
      <DataTable.Col source="discount" label="Discount" render={(s) => s.discount?.name ?? '—'} />
    </DataTable>
    </PhoneList>
  </List>
);

function usePatch() {
  const notify = useNotify();
  const refresh = useRefresh();
  return async (sub: Subscription, body: Record<string, unknown>, done: string, method = 'PATCH') => {
    await api(`/v1/subscriptions/${sub.id}`, { method, body: method === 'DELETE' ? undefined : body });
    notify(done, { type: 'info' });
    refresh();
  };
}

const live = (s: Subscription) => ['active', 'trialing', 'past_due', 'incomplete', 'unpaid'].includes(s.status);

const CancelDialog = ({ sub, onClose }: { sub: Subscription; onClose: () => void }) => {
  const patch = usePatch();
  const [reason, setReason] = useState('');
  const [comment, setComment] = useState('');
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog open onClose={onClose} aria-labelledby="cancel-title" fullWidth maxWidth="xs">
      <DialogTitle id="cancel-title">Cancel at the end of the period</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          <DialogContentText>
            The customer keeps access until {formatDate(sub.current_period_end)}; nothing more is charged.
          </DialogContentText>
          {error ? <Alert severity="error" role="alert">{error}</Alert> : null}
          <TextField select label="Reason" value={reason} onChange={(e) => setReason(e.target.value)}>
            <MenuItem value="">No reason given</MenuItem>
            {cancellationReasons.map((r) => (
              <MenuItem key={r.id} value={r.id}>
                {r.name}
              </MenuItem>
            ))}
          </TextField>
          <TextField label="Comment (optional)" value={comment} onChange={(e) => setComment(e.target.value)} multiline minRows={2} />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Keep it</Button>
        <Button
          variant="contained"
          color="warning"
          onClick={() =>
            patch(
              sub,
              {
                cancel_at_period_end: true,
                ...(reason ? { customer_cancellation_reason: reason } : {}),
                ...(comment.trim() ? { customer_cancellation_comment: comment.trim() } : {}),
              },
              'The subscription will end at the end of the period',
            ).then(onClose, (e: Error) => setError(e.message))
          }
        >
          Cancel at period end
        </Button>
      </DialogActions>
    </Dialog>
  );
};

const RevokeDialog = ({ sub, onClose }: { sub: Subscription; onClose: () => void }) => {
  const patch = usePatch();
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog open onClose={onClose} aria-labelledby="revoke-title">
      <DialogTitle id="revoke-title">Revoke this subscription now?</DialogTitle>
      <DialogContent>
        <DialogContentText>
          {sub.customer.email} loses access to {sub.product.name} and its benefits immediately. This cannot be undone.
        </DialogContentText>
        {error ? <Alert severity="error" role="alert">{error}</Alert> : null}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Keep it</Button>
        <Button variant="contained" color="error" onClick={() => patch(sub, {}, 'Subscription revoked', 'DELETE').then(onClose, (e: Error) => setError(e.message))}>
          Revoke now
        </Button>
      </DialogActions>
    </Dialog>
  );
};

const ChangeProductDialog = ({ sub, onClose }: { sub: Subscription; onClose: () => void }) => {
  const patch = usePatch();
  const { data: products } = useGetList<{ id: string; name: string; recurring_interval: string | null }>('products', {
    filter: { is_recurring: true, is_archived: false },
    pagination: { page: 1, perPage: 100 },
    sort: { field: 'name', order: 'ASC' },
  });
  const [productId, setProductId] = useState('');
  const [proration, setProration] = useState('prorate');
  const [error, setError] = useState<string | null>(null);
  return (
    <Dialog open onClose={onClose} aria-labelledby="change-title" fullWidth maxWidth="xs">
      <DialogTitle id="change-title">Change product</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          {error ? <Alert severity="error" role="alert">{error}</Alert> : null}
          <TextField select label="New product" value={productId} onChange={(e) => setProductId(e.target.value)}>
            {(products ?? []).filter((p) => p.id !== sub.product_id).map((p) => (
              <MenuItem key={p.id} value={p.id}>
                {p.name}
              </MenuItem>
            ))}
          </TextField>
          <TextField select label="Proration" value={proration} onChange={(e) => setProration(e.target.value)}>
            <MenuItem value="prorate">Prorate on the next invoice</MenuItem>
            <MenuItem value="invoice">Invoice the difference now</MenuItem>
          </TextField>
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button
          variant="contained"
          disabled={!productId}
          onClick={() => patch(sub, { product_id: productId, proration_behavior: proration }, 'Product changed').then(onClose, (e: Error) => setError(e.message))}
        >
          Change product
        </Button>
      </DialogActions>
    </Dialog>
  );
};

const Actions = () => {
  const sub = useRecordContext<Subscription>();
  const patch = usePatch();
  const notify = useNotify();
  const [dialog, setDialog] = useState<'cancel' | 'revoke' | 'change' | null>(null);
  if (!sub) return <TopToolbar />;
  const close = () => setDialog(null);
  return (
    <TopToolbar>
      {live(sub) && !sub.cancel_at_period_end ? <Button size="small" onClick={() => setDialog('cancel')}>Cancel at period end</Button> : null}
      {live(sub) && sub.cancel_at_period_end ? (
        <Button size="small" onClick={() => patch(sub, { cancel_at_period_end: false }, 'Cancellation withdrawn').catch((e: Error) => notify(e.message, { type: 'error' }))}>
          Uncancel
        </Button>
      ) : null}
      {live(sub) ? <Button size="small" onClick={() => setDialog('change')}>Change product</Button> : null}
      {live(sub) ? <Button size="small" color="error" onClick={() => setDialog('revoke')}>Revoke now</Button> : null}
      <OpenInTemporal workflowId={`subscription:${sub.id}`} />
      {dialog === 'cancel' ? <CancelDialog sub={sub} onClose={close} /> : null}
      {dialog === 'revoke' ? <RevokeDialog sub={sub} onClose={close} /> : null}
      {dialog === 'change' ? <ChangeProductDialog sub={sub} onClose={close} /> : null}
    </TopToolbar>
  );
};

const Title = () => {
  const s = useRecordContext<Subscription>();
  return <>{s ? `Subscription: ${s.product.name}` : 'Subscription'}</>;
};

export const SubscriptionShow = () => (
  <Show actions={<Actions />} title={<Title />}>
    <SimpleShowLayout>
      <FunctionField<Subscription>
        label="Status"
        render={(s) => (
          <Stack direction="row" spacing={1} sx={{ alignItems: 'center' }}>
            <StatusField />
            {s.cancel_at_period_end ? <Typography variant="body2">Cancels on {formatDate(s.current_period_end)}</Typography> : null}
          </Stack>
        )}
      />
      <FunctionField<Subscription> label="Customer" render={(s) => <Link to={`/customers/${s.customer_id}/show`}>{s.customer.email}</Link>} />
      <FunctionField<Subscription> label="Product" render={(s) => <Link to={`/products/${s.product_id}/show`}>{s.product.name}</Link>} />
      <FunctionField<Subscription> label="Amount" render={interval} />
      <DateTimeField source="started_at" label="Started" />
      <FunctionField<Subscription> label="Current period" render={(s) => `${formatDate(s.current_period_start)} – ${formatDate(s.current_period_end)}`} />
      <DateTimeField source="canceled_at" label="Canceled" />
      <DateTimeField source="ended_at" label="Ended" />
      <FunctionField<Subscription> label="Cancellation reason" render={(s) => [humanize(s.customer_cancellation_reason), s.customer_cancellation_comment].filter((x) => x && x !== '—').join(': ') || '—'} />
      <Labeled label="Orders of this customer for this product" fullWidth>
        <SubscriptionOrders />
      </Labeled>
    </SimpleShowLayout>
  </Show>
);

// The orders API filters by customer and product (not by subscription).
const SubscriptionOrders = () => {
  const s = useRecordContext<Subscription>();
  if (!s) return null;
  return (
        <ReferenceManyField reference="orders" target="customer_id" record={{ id: s.customer_id }} filter={{ product_id: s.product_id }} sort={{ field: 'created_at', order: 'DESC' }}>
          <DataTable bulkActionButtons={false} rowClick="show" resource="orders">
            <DataTable.Col source="created_at" label="Date" field={DateTimeField} />
            <DataTable.Col source="amount" field={MoneyField} />
            <DataTable.Col source="status" field={StatusField} />
          </DataTable>
        </ReferenceManyField>
  );
};
