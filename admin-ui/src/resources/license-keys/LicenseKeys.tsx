/** License keys issued by license-key benefits: list, status change (revoke, disable, grant back), limits, activations. */
import {
  DataTable,
  DateTimeInput,
  Edit,
  FunctionField,
  Labeled,
  List,
  NumberInput,
  ReferenceInput,
  SelectInput,
  SimpleForm,
  TextField,
  useRecordContext,
} from 'react-admin';
import { Link } from 'react-router-dom';
import { Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { DateTimeField, toIsoDateTime, formatDate } from '../../common/money.tsx';
import { StatusField } from '../../common/StatusChip.tsx';

interface LicenseKey {
  id: string;
  display_key: string;
  key: string;
  status: string;
  usage: number;
  limit_usage: number | null;
  limit_activations: number | null;
  validations: number;
  expires_at: string | null;
  customer_id: string;
  customer: { email: string };
  benefit_id: string;
  activations?: { id: string; label: string; created_at: string; meta: Record<string, unknown> }[];
}

const statuses = [
  { id: 'granted', name: 'Granted' },
  { id: 'revoked', name: 'Revoked' },
  { id: 'disabled', name: 'Disabled' },
];

export const LicenseKeyList = () => (
  <List
    filters={[
      <ReferenceInput key="benefit_id" source="benefit_id" reference="benefits" filter={{ type: 'license_keys' }} alwaysOn>
        <SelectInput optionText="description" label="Benefit" />
      </ReferenceInput>,
    ]}
    sort={{ field: '', order: 'ASC' }}
    exporter={false}
  >
    <DataTable<LicenseKey> rowClick="edit" bulkActionButtons={false}>
      <DataTable.Col source="display_key" label="Key" disableSort />
      <DataTable.Col label="Customer" render={(k) => k.customer?.email ?? '—'} />
      <DataTable.Col source="status" disableSort field={StatusField} />
      <DataTable.Col label="Usage" render={(k) => `${k.usage}${k.limit_usage ? ` / ${k.limit_usage}` : ''}`} />
      <DataTable.Col label="Validations" render={(k) => String(k.validations)} />
      <DataTable.Col label="Expires" render={(k) => (k.expires_at ? formatDate(k.expires_at) : 'Never')} />
    </DataTable>
  </List>
);

const Activations = () => {
  const key = useRecordContext<LicenseKey>();
  if (!key?.activations?.length) return <Typography variant="body2">No activations.</Typography>;
  return (
    <Table size="small" aria-label="Activations">
      <TableHead>
        <TableRow>
          <TableCell>Label</TableCell>
          <TableCell>Activated</TableCell>
          <TableCell>Details</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {key.activations.map((a) => (
          <TableRow key={a.id}>
            <TableCell>{a.label}</TableCell>
            <TableCell>{formatDate(a.created_at)}</TableCell>
            <TableCell>{Object.entries(a.meta ?? {}).map(([k, v]) => `${k}: ${String(v)}`).join(', ') || '—'}</TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
};

const toBody = (d: LicenseKey) => ({
  status: d.status,
  usage: d.usage ?? 0,
  limit_activations: d.limit_activations || null,
  limit_usage: d.limit_usage || null,
  expires_at: d.expires_at || null,
});

export const LicenseKeyEdit = () => (
  <Edit mutationMode="pessimistic" transform={toBody as never} redirect={false}>
    <SimpleForm>
      <Labeled label="Key">
        <TextField source="key" />
      </Labeled>
      <Labeled label="Customer">
        <FunctionField<LicenseKey> render={(k) => <Link to={`/customers/${k.customer_id}/show`}>{k.customer.email}</Link>} />
      </Labeled>
      <SelectInput source="status" choices={statuses} />
      <NumberInput source="usage" min={0} />
      <NumberInput source="limit_usage" label="Usage limit" min={1} />
      <NumberInput source="limit_activations" label="Activation limit" min={1} max={50} />
      <DateTimeInput source="expires_at" parse={toIsoDateTime} label="Expires" />
      <Labeled label="Activations" fullWidth>
        <Activations />
      </Labeled>
      <DateTimeField source="last_validated_at" label="Last validated" />
    </SimpleForm>
  </Edit>
);
