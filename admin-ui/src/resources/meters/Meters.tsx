/**
 * Meters: which events count (a filter of clauses joined by "and" / "or") and how (count, or
 * sum / max / min / average of a metadata property); a meter page charts the quantities, for all
 * customers or one, and lists the matching events.
 */
import { useState } from 'react';
import {
  ArrayInput,
  Create,
  CreateButton,
  DataTable,
  Edit,
  EditButton,
  FormDataConsumer,
  FunctionField,
  Labeled,
  List,
  SearchInput,
  SelectInput,
  Show,
  SimpleForm,
  SimpleFormIterator,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  required,
  useGetList,
  useRecordContext,
} from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { Alert, Box, MenuItem, Stack, TextField as MuiTextField, Typography } from '@mui/material';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { api } from '../../common/api.ts';
import { ApiTable } from '../../common/ApiTable.tsx';
import { DateTimeField, formatDate } from '../../common/money.tsx';

type Value = string | number | boolean;
interface Clause {
  property: string;
  operator: string;
  value: Value;
}
interface Group {
  conjunction: 'and' | 'or';
  clauses: (Clause | Group)[];
}
interface Meter {
  id: string;
  name: string;
  filter: Group;
  aggregation: { func: string; property?: string };
  created_at: string;
}

const operators = [
  { id: 'eq', name: 'equals' },
  { id: 'ne', name: 'does not equal' },
  { id: 'gt', name: 'greater than' },
  { id: 'gte', name: 'at least' },
  { id: 'lt', name: 'less than' },
  { id: 'lte', name: 'at most' },
  { id: 'like', name: 'contains' },
  { id: 'not_like', name: 'does not contain' },
];
const funcs = [
  { id: 'count', name: 'Count events' },
  { id: 'sum', name: 'Sum of a property' },
  { id: 'max', name: 'Maximum of a property' },
  { id: 'min', name: 'Minimum of a property' },
  { id: 'avg', name: 'Average of a property' },
];

/** Typed text → the value type the filter compares with: numbers and booleans as such. */
const typed = (v: unknown): Value => {
  const s = String(v ?? '').trim();
  if (s === 'true' || s === 'false') return s === 'true';
  if (/^-?\d+$/.test(s)) return Number(s);
  return s;
};

const isGroup = (c: Clause | Group): c is Group => 'clauses' in c;

export const describeFilter = (g: Group): string =>
  g.clauses.length
    ? g.clauses
        .map((c) => (isGroup(c) ? `(${describeFilter(c)})` : `${c.property} ${operators.find((o) => o.id === c.operator)?.name ?? c.operator} ${JSON.stringify(c.value)}`))
        .join(` ${g.conjunction} `)
    : 'every event';

const describeAggregation = (a: Meter['aggregation']) => (a.func === 'count' ? 'count' : `${a.func} of ${a.property}`);

interface MeterForm {
  name: string;
  filter: { conjunction: 'and' | 'or'; clauses: { property: string; operator: string; value: unknown }[] };
  aggregation: { func: string; property?: string };
}

const toBody = (d: MeterForm) => ({
  name: d.name.trim(),
  filter: {
    conjunction: d.filter?.conjunction ?? 'and',
    clauses: (d.filter?.clauses ?? []).map((c) => ('clauses' in (c as object) ? c : { property: c.property.trim(), operator: c.operator, value: typed(c.value) })),
  },
  aggregation: d.aggregation.func === 'count' ? { func: 'count' } : { func: d.aggregation.func, property: d.aggregation.property?.trim() },
});

const FilterBuilder = () => (
  <Box sx={{ width: '100%' }}>
    <SelectInput
      source="filter.conjunction"
      label="Count events that match"
      choices={[
        { id: 'and', name: 'all of these conditions' },
        { id: 'or', name: 'any of these conditions' },
      ]}
    />
    <ArrayInput source="filter.clauses" label="Conditions">
      <SimpleFormIterator inline disableReordering>
        <TextInput source="property" label="Property" helperText="name, or a metadata key" validate={required()} />
        <SelectInput source="operator" label="Operator" choices={operators} defaultValue="eq" validate={required()} />
        <TextInput source="value" label="Value" format={(v: unknown) => (v === undefined || v === null ? '' : String(v))} validate={required()} />
      </SimpleFormIterator>
    </ArrayInput>
  </Box>
);

const Fields = () => (
  <>
    <TextInput source="name" validate={required()} fullWidth />
    <FilterBuilder />
    <SelectInput source="aggregation.func" label="Aggregation" choices={funcs} validate={required()} />
    <FormDataConsumer<MeterForm>>
      {({ formData }) => (formData.aggregation?.func && formData.aggregation.func !== 'count' ? <TextInput source="aggregation.property" label="Property" validate={required()} /> : null)}
    </FormDataConsumer>
  </>
);

// Sortable by created_at and name.
export const MeterList = () => (
  <List filters={[<SearchInput key="q" source="q" alwaysOn />]} sort={{ field: 'created_at', order: 'DESC' }} actions={<TopToolbar><CreateButton /></TopToolbar>}>
    <DataTable<Meter> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col label="Filter" render={(m) => describeFilter(m.filter)} />
      <DataTable.Col label="Aggregation" render={(m) => describeAggregation(m.aggregation)} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);

export const MeterCreate = () => (
  <Create transform={toBody} redirect="show">
    <SimpleForm defaultValues={{ filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: '' }] }, aggregation: { func: 'count' } }}>
      <Fields />
    </SimpleForm>
  </Create>
);

export const MeterEdit = () => (
  <Edit transform={toBody} mutationMode="pessimistic" redirect="show">
    <SimpleForm>
      <Fields />
    </SimpleForm>
  </Edit>
);

const isoDay = (d: Date) => d.toISOString().slice(0, 10);

const Quantities = () => {
  const meter = useRecordContext<Meter>();
  const [customerId, setCustomerId] = useState<string | null>(null);
  const { data: customers } = useGetList<{ id: string; email: string }>('customers', { pagination: { page: 1, perPage: 100 }, sort: { field: 'email', order: 'ASC' } });
  const [interval, setInterval] = useState('day');
  const [start] = useState(() => isoDay(new Date(Date.now() - 29 * 86400_000)));
  const { data, error } = useQuery({
    queryKey: ['meter-quantities', meter?.id, customerId, interval, start],
    enabled: !!meter,
    queryFn: () =>
      api<{ quantities: { timestamp: string; quantity: number }[] }>(`/v1/meters/${meter!.id}/quantities`, {
        query: {
          start_timestamp: `${start}T00:00:00Z`,
          end_timestamp: new Date().toISOString(),
          interval,
          customer_id: customerId ?? undefined,
        },
      }),
  });
  if (!meter) return null;
  return (
    <Box sx={{ width: '100%' }}>
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 1, alignItems: { sm: 'center' } }}>
        <MuiTextField select size="small" label="Customer" value={customerId ?? ''} onChange={(e) => setCustomerId(e.target.value || null)} sx={{ minWidth: 280 }}>
          <MenuItem value="">All customers</MenuItem>
          {(customers ?? []).map((c) => (
            <MenuItem key={c.id} value={c.id}>
              {c.email}
            </MenuItem>
          ))}
        </MuiTextField>
        <MuiTextField select size="small" label="Interval" value={interval} onChange={(e) => setInterval(e.target.value)} sx={{ minWidth: 140 }}>
          {['hour', 'day', 'week', 'month'].map((i) => (
            <MenuItem key={i} value={i}>
              By {i}
            </MenuItem>
          ))}
        </MuiTextField>
      </Stack>
      {error ? <Alert severity="error">{error.message}</Alert> : null}
      {data ? (
        <Typography variant="body2" sx={{ mb: 1 }}>
          Total over the last 30 days: {data.quantities.reduce((sum, q) => sum + q.quantity, 0).toLocaleString()}
        </Typography>
      ) : null}
      <Box role="img" aria-label="Quantities chart" sx={{ width: '100%', height: 240 }}>
        <ResponsiveContainer width="100%" height="100%">
          <LineChart data={(data?.quantities ?? []).map((q) => ({ ...q, label: formatDate(q.timestamp, false) }))}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="label" />
            <YAxis />
            <Tooltip />
            <Line type="monotone" dataKey="quantity" name="Quantity" stroke="#3949ab" dot={false} isAnimationActive={false} />
          </LineChart>
        </ResponsiveContainer>
      </Box>
    </Box>
  );
};

const MeterEvents = () => {
  const meter = useRecordContext<Meter>();
  if (!meter) return null;
  return (
    <ApiTable<{ id: string; name: string; timestamp: string; customer: { email: string } | null; external_customer_id: string | null; metadata: Record<string, unknown> }>
      path={`/v1/meters/${meter.id}/events`}
      caption="Matching events"
      empty="No matching event yet."
      columns={[
        { label: 'Time', render: (e) => formatDate(e.timestamp) },
        { label: 'Name', render: (e) => e.name },
        { label: 'Customer', render: (e) => e.customer?.email ?? e.external_customer_id ?? '—' },
        { label: 'Metadata', render: (e) => JSON.stringify(e.metadata) },
      ]}
    />
  );
};

export const MeterShow = () => (
  <Show actions={<TopToolbar><EditButton /></TopToolbar>}>
    <SimpleShowLayout>
      <TextField source="name" />
      <FunctionField<Meter> label="Filter" render={(m) => describeFilter(m.filter)} />
      <FunctionField<Meter> label="Aggregation" render={(m) => describeAggregation(m.aggregation)} />
      <Labeled label="Quantities, last 30 days" fullWidth>
        <Quantities />
      </Labeled>
      <Labeled label="Events" fullWidth>
        <MeterEvents />
      </Labeled>
    </SimpleShowLayout>
  </Show>
);
