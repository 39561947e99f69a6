/** The event explorer: every ingested and system event, filtered by name, source, customer and time. */
import { AutocompleteInput, DataTable, DateTimeInput, List, ReferenceInput, SelectInput, TextInput, useRecordContext } from 'react-admin';
import { Box } from '@mui/material';
import { DateTimeField } from '../../common/money.tsx';

interface Event {
  id: string;
  name: string;
  source: 'system' | 'user';
  timestamp: string;
  customer: { email: string } | null;
  external_customer_id: string | null;
  metadata: Record<string, unknown>;
}

const toIso = (v: string | Date | null) => (v ? new Date(v).toISOString() : undefined);

const filters = [
  <TextInput key="name" source="name" label="Event name" alwaysOn />,
  <SelectInput key="source" source="source" choices={[{ id: 'user', name: 'Ingested' }, { id: 'system', name: 'System' }]} alwaysOn />,
  <ReferenceInput key="customer_id" source="customer_id" reference="customers">
    <AutocompleteInput optionText="email" label="Customer" filterToQuery={(q) => ({ q })} />
  </ReferenceInput>,
  <TextInput key="external_customer_id" source="external_customer_id" label="External customer ID" />,
  <DateTimeInput key="start_timestamp" source="start_timestamp" label="From" parse={toIso} />,
  <DateTimeInput key="end_timestamp" source="end_timestamp" label="To" parse={toIso} />,
];

function MetadataJson() {
  const e = useRecordContext<Event>();
  return <>{e ? JSON.stringify(e.metadata, null, 2) : null}</>;
}

// Sortable by timestamp only.
export const EventList = () => (
  <List filters={filters} sort={{ field: 'timestamp', order: 'DESC' }} exporter={false}>
    <DataTable<Event>
      bulkActionButtons={false}
      rowClick="expand"
      expand={
        <Box component="pre" sx={{ m: 0, fontSize: 12 }}>
          <MetadataJson />
        </Box>
      }
    >
      <DataTable.Col source="timestamp" field={DateTimeField} />
      <DataTable.Col source="name" disableSort />
      <DataTable.Col source="source" disableSort />
      <DataTable.Col label="Customer" render={(e) => e.customer?.email ?? e.external_customer_id ?? '—'} />
      <DataTable.Col label="Metadata" render={(e) => Object.keys(e.metadata ?? {}).join(', ') || '—'} />
    </DataTable>
  </List>
);
