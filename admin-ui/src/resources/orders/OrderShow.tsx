/**
 * An order: customer, product, lines, subtotal, discount, tax, total, refunds; download the PDF
 * invoice; refund what remains refundable.
 */
import { useState } from 'react';
import {
  DataTable,
  FunctionField,
  Labeled,
  ReferenceManyField,
  Show,
  SimpleShowLayout,
  TopToolbar,
  useGetList,
  useNotify,
  useRecordContext,
} from 'react-admin';
import { Link } from 'react-router-dom';
import { Box, Button, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import PictureAsPdfIcon from '@mui/icons-material/PictureAsPdf';
import UndoIcon from '@mui/icons-material/Undo';
import { api } from '../../common/api.ts';
import { DateTimeField, MoneyField, formatMoney } from '../../common/money.tsx';
import { StatusChip, StatusField } from '../../common/StatusChip.tsx';
import { humanize } from '../../common/choices.ts';
import { RefundDialog } from './RefundDialog.tsx';
import { OpenInTemporal, anyOf } from '../../common/temporal.tsx';
import type { Order, Refund } from './types.ts';

const InvoiceButton = () => {
  const order = useRecordContext<Order>();
  const notify = useNotify();
  const [busy, setBusy] = useState(false);
  if (!order) return null;
  const download = async () => {
    setBusy(true);
    try {
      const { url } = await api<{ url: string }>(`/v1/orders/${order.id}/invoice`);
      const a = document.createElement('a');
      a.href = url;
      a.download = `invoice-${order.id}.pdf`;
      a.target = '_blank';
      a.rel = 'noopener';
      document.body.appendChild(a);
      a.click();
      a.remove();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Could not get the invoice', { type: 'error' });
    } finally {
      setBusy(false);
    }
  };
  return (
    <Button size="small" startIcon={<PictureAsPdfIcon />} onClick={() => void download()} disabled={busy || order.status === 'pending'}>
      Download invoice
    </Button>
  );
};

/** What can still be refunded: the net amount less refunds that are pending or succeeded. */
function useRefundable(order: Order | undefined): number {
  const { data } = useGetList<Refund>(
    'refunds',
    { filter: { order_id: order?.id }, pagination: { page: 1, perPage: 100 }, sort: { field: 'created_at', order: 'DESC' } },
    { enabled: !!order },
  );
  if (!order) return 0;
  const reserved = (data ?? []).filter((r) => r.status === 'pending' || r.status === 'succeeded').reduce((s, r) => s + r.amount, 0);
  return Math.max(0, order.net_amount - Math.max(reserved, order.refunded_amount));
}

const RefundButton = () => {
  const order = useRecordContext<Order>();
  const refundable = useRefundable(order);
  const [open, setOpen] = useState(false);
  if (!order) return null;
  return (
    <>
      <Button size="small" color="error" startIcon={<UndoIcon />} onClick={() => setOpen(true)} disabled={order.status === 'pending' || refundable <= 0}>
        Refund
      </Button>
      {open ? <RefundDialog order={order} refundable={refundable} open={open} onClose={() => setOpen(false)} /> : null}
    </>
  );
};

const Lines = () => {
  const o = useRecordContext<Order>();
  if (!o) return null;
  const row = (label: string, amount: number, strong = false) => (
    <TableRow>
      <TableCell colSpan={2} align="right" sx={strong ? { fontWeight: 600 } : undefined}>
        {label}
      </TableCell>
      <TableCell align="right" sx={strong ? { fontWeight: 600 } : undefined}>
        {formatMoney(amount, o.currency)}
      </TableCell>
    </TableRow>
  );
  return (
    <Table size="small" aria-label="Order lines" sx={{ maxWidth: 640 }}>
      <TableHead>
        <TableRow>
          <TableCell>Line</TableCell>
          <TableCell align="right">Tax</TableCell>
          <TableCell align="right">Amount</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {o.items.map((item) => (
          <TableRow key={item.id}>
            <TableCell>
              {item.label}
              {item.proration ? ' (proration)' : ''}
            </TableCell>
            <TableCell align="right">{formatMoney(item.tax_amount, o.currency)}</TableCell>
            <TableCell align="right">{formatMoney(item.amount, o.currency)}</TableCell>
          </TableRow>
        ))}
        {row('Subtotal', o.subtotal_amount)}
        {o.discount_amount ? row(`Discount${o.discount ? ` (${o.discount.name})` : ''}`, -o.discount_amount) : null}
        {row('Net', o.net_amount)}
        {row('Tax', o.tax_amount)}
        {row('Total', o.total_amount, true)}
        {o.refunded_amount ? row('Refunded', -(o.refunded_amount + o.refunded_tax_amount)) : null}
      </TableBody>
    </Table>
  );
};

/** The order's runs: its checkout confirmation, its subscription, its refunds. */
const OrderRuns = () => {
  const o = useRecordContext<Order>();
  return o ? <OpenInTemporal query={anyOf({ OrderId: o.id, CheckoutId: o.checkout_id, SubscriptionId: o.subscription_id })} /> : null;
};

const Title = () => {
  const o = useRecordContext<Order>();
  return <>{o ? `Order of ${formatMoney(o.total_amount, o.currency)}` : 'Order'}</>;
};

export const OrderShow = () => (
  <Show
    title={<Title />}
    actions={
      <TopToolbar>
        <InvoiceButton />
        <RefundButton />
        <OrderRuns />
      </TopToolbar>
    }
  >
    <SimpleShowLayout>
      <StatusField label="Status" />
      <DateTimeField source="created_at" label="Date" />
      <FunctionField<Order> label="Customer" render={(o) => <Link to={`/customers/${o.customer_id}/show`}>{o.customer.name ? `${o.customer.name} <${o.customer.email}>` : o.customer.email}</Link>} />
      <FunctionField<Order> label="Product" render={(o) => <Link to={`/products/${o.product_id}/show`}>{o.product.name}</Link>} />
      <FunctionField<Order> label="Billing reason" render={(o) => humanize(o.billing_reason)} />
      <FunctionField<Order> label="Subscription" render={(o) => (o.subscription_id ? <Link to={`/subscriptions/${o.subscription_id}/show`}>View subscription</Link> : '—')} />
      <FunctionField<Order>
        label="Billing address"
        render={(o) => (o.billing_address ? [o.billing_address.line1, o.billing_address.postal_code, o.billing_address.city, o.billing_address.country].filter(Boolean).join(', ') : '—')}
      />
      <Labeled label="Lines" fullWidth>
        <Lines />
      </Labeled>
      <Labeled label="Refunds" fullWidth>
        <ReferenceManyField reference="refunds" target="order_id" sort={{ field: 'created_at', order: 'DESC' }}>
          <DataTable<Refund> bulkActionButtons={false} rowClick={false} empty={<Typography variant="body2">No refunds.</Typography>}>
            <DataTable.Col source="created_at" label="Date" field={DateTimeField} />
            <DataTable.Col source="amount" field={MoneyField} />
            <DataTable.Col source="tax_amount" label="Tax" field={MoneyField} />
            <DataTable.Col source="reason" render={(r) => humanize(r.reason)} />
            <DataTable.Col source="status" render={(r) => <StatusChip status={r.status} />} />
            <DataTable.Col source="revoke_benefits" label="Benefits revoked" render={(r) => (r.revoke_benefits ? 'Yes' : 'No')} />
            <DataTable.Col label="Workflow" render={(r) => <OpenInTemporal workflowId={`refund:${r.id}`} />} />
          </DataTable>
        </ReferenceManyField>
      </Labeled>
      <Box />
    </SimpleShowLayout>
  </Show>
);
