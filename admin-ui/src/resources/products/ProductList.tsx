import { BooleanField, CreateButton, DataTable, DateField, List, SearchInput, TopToolbar } from 'react-admin';
import { formatInterval, formatPrice, type Product } from './price.ts';

const filters = [<SearchInput key="q" source="q" alwaysOn />];

const Actions = () => (
  <TopToolbar>
    <CreateButton />
  </TopToolbar>
);

// The API scopes the list to the signed-in user's organizations; it sorts by name or created_at only.
export const ProductList = () => (
  <List filters={filters} actions={<Actions />} sort={{ field: 'created_at', order: 'DESC' }}>
    <DataTable<Product> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col<Product>
        source="recurring_interval"
        label="Billing"
        disableSort
        render={(record) => formatInterval(record.recurring_interval)}
      />
      <DataTable.Col<Product> label="Price" disableSort render={(record) => formatPrice(record.prices[0])} />
      <DataTable.Col source="is_archived" label="Archived" disableSort field={BooleanField} />
      <DataTable.Col source="created_at" label="Created" field={DateField} />
    </DataTable>
  </List>
);
