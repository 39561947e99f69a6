import { CreateButton, DataTable, ExportButton, List, SearchInput, TextInput, TopToolbar } from 'react-admin';
import { DateTimeField, formatDate } from '../../common/money.tsx';
import { PhoneList } from '../../common/PhoneList.tsx';
import type { Customer } from './CustomerShow.tsx';

const filters = [<SearchInput key="q" source="q" alwaysOn />, <TextInput key="email" source="email" label="Exact email" />];

// Sortable by created_at, email and name.
export const CustomerList = () => (
  <List filters={filters} sort={{ field: 'created_at', order: 'DESC' }} actions={<TopToolbar><CreateButton /><ExportButton /></TopToolbar>}>
    <PhoneList<Customer> primary={(c) => c.email} secondary={(c) => c.name ?? c.external_id ?? ''} tertiary={(c) => formatDate(c.created_at, false)}>
    <DataTable rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="email" />
      <DataTable.Col source="name" render={(c: { name: string | null }) => c.name ?? '—'} />
      <DataTable.Col source="external_id" label="External ID" disableSort render={(c: { external_id: string | null }) => c.external_id ?? '—'} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
    </PhoneList>
  </List>
);
