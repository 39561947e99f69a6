import { CreateButton, DataTable, ExportButton, List, NullableBooleanInput, SearchInput, TopToolbar } from 'react-admin';
import { DateTimeField } from '../../common/money.tsx';
import { formatInterval, formatPrice, type Product } from './price.ts';
import { formatTrial } from './trial.tsx';

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <NullableBooleanInput key="is_archived" source="is_archived" label="Archived" alwaysOn />,
  <NullableBooleanInput key="is_recurring" source="is_recurring" label="Recurring" alwaysOn />,
];

const Actions = () => (
  <TopToolbar>
    <CreateButton />
    <ExportButton />
  </TopToolbar>
);

// Sortable by what the API sorts on: name, created_at, price_amount_type, price_amount.
export const ProductList = () => (
  <List filters={filters} filterDefaultValues={{ is_archived: false }} actions={<Actions />} sort={{ field: 'created_at', order: 'DESC' }}>
    <DataTable<Product> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col<Product> source="recurring_interval" label="Billing" disableSort render={(r) => formatInterval(r.recurring_interval)} />
      <DataTable.Col<Product> source="trial_interval" label="Trial" disableSort render={(r) => formatTrial(r, '—')} />
      <DataTable.Col<Product> source="price_amount" label="Price" render={(r) => r.prices.filter((p) => !p.is_archived).map(formatPrice).join(' · ') || '—'} />
      <DataTable.Col<Product> source="price_amount_type" label="Price type" render={(r) => r.prices[0]?.amount_type.replace('_', ' ') ?? '—'} />
      <DataTable.Col<Product> source="is_archived" label="Status" disableSort render={(r) => (r.is_archived ? 'Archived' : 'Active')} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);
