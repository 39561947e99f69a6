import { DataTable, List, ReferenceInput, SelectInput, AutocompleteInput, TextInput } from 'react-admin';
import { DateTimeField, MoneyField, formatDate, formatMoney } from '../../common/money.tsx';
import { humanize } from '../../common/choices.ts';
import { PhoneList, joined } from '../../common/PhoneList.tsx';
import { StatusField } from '../../common/StatusChip.tsx';
import type { Order } from './types.ts';

const billingTypes = [
  { id: 'one_time', name: 'One-time' },
  { id: 'recurring', name: 'Recurring' },
];

// Every filter the API has: product, billing type, price type, discount, customer, checkout.
const filters = [
  <ReferenceInput key="product_id" source="product_id" reference="products" alwaysOn>
    <SelectInput optionText="name" label="Product" />
  </ReferenceInput>,
  <ReferenceInput key="customer_id" source="customer_id" reference="customers" alwaysOn>
    <AutocompleteInput optionText="email" label="Customer" filterToQuery={(q) => ({ q })} />
  </ReferenceInput>,
  <SelectInput key="product_billing_type" source="product_billing_type" label="Billing" choices={billingTypes} />,
  <SelectInput key="product_price_type" source="product_price_type" label="Price type" choices={billingTypes} />,
  <ReferenceInput key="discount_id" source="discount_id" reference="discounts">
    <SelectInput optionText="name" label="Discount" />
  </ReferenceInput>,
  <TextInput key="checkout_id" source="checkout_id" label="Checkout ID" />,
];

// Sortable by created_at, amount, net_amount, customer, product, discount and subscription.
export const OrderList = () => (
  <List filters={filters} sort={{ field: 'created_at', order: 'DESC' }}>
    <PhoneList<Order>
      primary={(o) => o.customer?.email ?? '—'}
      tertiary={(o) => formatMoney(o.amount, o.currency)}
      secondary={(o) => joined(o.product?.name, humanize(o.status), formatDate(o.created_at))}
    >
    <DataTable<Order> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="created_at" label="Date" field={DateTimeField} />
      <DataTable.Col source="customer" label="Customer" render={(o) => o.customer?.email ?? '—'} />
      <DataTable.Col source="product" label="Product" render={(o) => o.product?.name ?? '—'} />
      <DataTable.Col source="amount" label="Amount" field={MoneyField} />
      <DataTable.Col source="net_amount" label="Net" field={MoneyField} />
      <DataTable.Col source="status" disableSort field={StatusField} />
      <DataTable.Col source="discount" label="Discount" render={(o) => o.discount?.name ?? '—'} />
      <DataTable.Col source="subscription" label="Subscription" render={(o) => (o.subscription_id ? 'Yes' : '—')} />
      <DataTable.Col source="billing_reason" label="Reason" disableSort render={(o) => o.billing_reason.replace(/_/g, ' ')} />
    </DataTable>
    </PhoneList>
  </List>
);
