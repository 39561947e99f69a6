/** Tax rates by country (basis points on the wire, percent on screen): list, add, delete. */
import { Create, CreateButton, DataTable, DeleteButton, List, NumberInput, SimpleForm, TextInput, TopToolbar, regex, required } from 'react-admin';
import { DateTimeField } from '../../common/money.tsx';

interface TaxRate {
  id: string;
  country: string;
  basis_points: number;
  created_at: string;
}

const regionName = (code: string) => {
  try {
    return new Intl.DisplayNames(undefined, { type: 'region' }).of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
};

// Sortable by created_at, country and basis_points.
export const TaxRateList = () => (
  <List sort={{ field: 'country', order: 'ASC' }} actions={<TopToolbar><CreateButton label="Add tax rate" /></TopToolbar>} exporter={false}>
    <DataTable<TaxRate> bulkActionButtons={false} rowClick={false}>
      <DataTable.Col source="country" render={(t) => `${regionName(t.country)} (${t.country.toUpperCase()})`} />
      <DataTable.Col source="basis_points" label="Rate" render={(t) => `${(t.basis_points / 100).toLocaleString(undefined, { maximumFractionDigits: 2 })}%`} />
      <DataTable.Col source="created_at" label="Added" field={DateTimeField} />
      <DataTable.Col<TaxRate> label="Actions" render={(t) => <DeleteButton record={t} mutationMode="pessimistic" redirect={false} />} />
    </DataTable>
  </List>
);

export const TaxRateCreate = () => (
  <Create
    redirect="list"
    transform={(d: { country: string; percent: number }) => ({ country: d.country.trim().toUpperCase(), basis_points: Math.round(Number(d.percent) * 100) })}
  >
    <SimpleForm>
      <TextInput source="country" label="Country" helperText="Two-letter code, e.g. DE" validate={[required(), regex(/^[a-zA-Z]{2}$/, 'Two letters, e.g. DE')]} />
      <NumberInput source="percent" label="Rate (%)" min={0} max={100} step={0.01} validate={required()} />
    </SimpleForm>
  </Create>
);
