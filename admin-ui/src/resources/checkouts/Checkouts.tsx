/** Checkouts (open, expired, confirmed, succeeded, failed): who is buying what, for how much. */
import { DataTable, FunctionField, List, ReferenceInput, SelectInput, Show, SimpleShowLayout, TextField, TopToolbar } from 'react-admin';
import { OpenInTemporal } from '../../common/temporal.tsx';
import { Link } from 'react-router-dom';
import { DateTimeField, MoneyField, formatMoney } from '../../common/money.tsx';
import { StatusField } from '../../common/StatusChip.tsx';

interface Checkout {
  id: string;
  status: string;
  customer_email: string | null;
  customer_name: string | null;
  customer_id: string | null;
  product: { id: string; name: string } | null;
  total_amount: number;
  currency: string;
  url: string;
  expires_at: string;
}

const statuses = ['open', 'expired', 'confirmed', 'succeeded', 'failed'].map((s) => ({ id: s, name: s }));

const filters = [
  <SelectInput key="status" source="status" choices={statuses} alwaysOn />,
  <ReferenceInput key="product_id" source="product_id" reference="products" alwaysOn>
    <SelectInput optionText="name" label="Product" />
  </ReferenceInput>,
];

// Sortable by created_at, expires_at and status.
export const CheckoutList = () => (
  <List filters={filters} sort={{ field: 'created_at', order: 'DESC' }} exporter={false}>
    <DataTable<Checkout> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col label="Customer" render={(c) => c.customer_email ?? '—'} />
      <DataTable.Col label="Product" render={(c) => c.product?.name ?? '—'} />
      <DataTable.Col source="total_amount" label="Total" disableSort field={MoneyField} />
      <DataTable.Col source="status" field={StatusField} />
      <DataTable.Col source="expires_at" label="Expires" field={DateTimeField} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);

export const CheckoutShow = () => (
  <Show actions={<TopToolbar><FunctionField<Checkout> render={(c) => <OpenInTemporal workflowId={`checkout-confirm:${c.id}`} />} /></TopToolbar>}>
    <SimpleShowLayout>
      <StatusField label="Status" />
      <FunctionField<Checkout> label="Product" render={(c) => (c.product ? <Link to={`/products/${c.product.id}/show`}>{c.product.name}</Link> : '—')} />
      <FunctionField<Checkout> label="Customer" render={(c) => (c.customer_id ? <Link to={`/customers/${c.customer_id}/show`}>{c.customer_email}</Link> : c.customer_email ?? '—')} />
      <MoneyField source="subtotal_amount" label="Subtotal" />
      <MoneyField source="discount_amount" label="Discount" />
      <MoneyField source="tax_amount" label="Tax" />
      <FunctionField<Checkout> label="Total" render={(c) => formatMoney(c.total_amount, c.currency)} />
      <TextField source="url" label="Checkout URL" />
      <DateTimeField source="expires_at" label="Expires" />
      <DateTimeField source="created_at" label="Created" />
    </SimpleShowLayout>
  </Show>
);
