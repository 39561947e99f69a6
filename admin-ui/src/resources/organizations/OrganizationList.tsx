import { DataTable, DateField, List } from 'react-admin';

export const OrganizationList = () => (
  <List sort={{ field: 'name', order: 'ASC' }} exporter={false}>
    <DataTable rowClick={false} bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col source="slug" />
      <DataTable.Col source="created_at" label="Created" field={DateField} />
    </DataTable>
  </List>
);
