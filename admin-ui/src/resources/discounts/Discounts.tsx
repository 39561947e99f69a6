/** Discounts: fixed or percentage, once / forever / repeating, codes, redemption limits, products. */
import {
  AutocompleteArrayInput,
  Create,
  CreateButton,
  DataTable,
  DateTimeInput,
  DeleteButton,
  Edit,
  FormDataConsumer,
  List,
  NumberInput,
  ReferenceArrayInput,
  SearchInput,
  SelectInput,
  SimpleForm,
  TextInput,
  TopToolbar,
  required,
} from 'react-admin';
import { Box } from '@mui/material';
import { currencies } from '../../common/choices.ts';
import { DateTimeField, toIsoDateTime, formatMoney, toMajor, toMinor } from '../../common/money.tsx';

interface Discount {
  id: string;
  name: string;
  code: string | null;
  type: 'fixed' | 'percentage';
  amount?: number;
  currency?: string;
  basis_points?: number;
  duration: 'once' | 'forever' | 'repeating';
  duration_in_months?: number | null;
  max_redemptions: number | null;
  redemptions_count: number;
  starts_at: string | null;
  ends_at: string | null;
  products: { id: string; name: string }[];
}

export const describeDiscount = (d: Discount) =>
  `${d.type === 'percentage' ? `${(d.basis_points ?? 0) / 100}%` : formatMoney(d.amount ?? 0, d.currency ?? 'usd')} off ${
    d.duration === 'repeating' ? `for ${d.duration_in_months} months` : d.duration
  }`;

interface DiscountForm extends Partial<Discount> {
  percent?: number | null;
  amount_major?: number | null;
  product_ids?: string[];
}

const toBody = (d: DiscountForm) => ({
  name: d.name?.trim(),
  code: d.code?.trim() || null,
  type: d.type,
  duration: d.duration,
  ...(d.duration === 'repeating' ? { duration_in_months: d.duration_in_months } : {}),
  ...(d.type === 'percentage'
    ? { basis_points: Math.round(Number(d.percent ?? 0) * 100) }
    : { amount: toMinor(d.amount_major, d.currency ?? 'usd'), currency: d.currency ?? 'usd' }),
  starts_at: d.starts_at || null,
  ends_at: d.ends_at || null,
  max_redemptions: d.max_redemptions || null,
  products: d.product_ids ?? [],
});

const toForm = (d: Discount) => ({
  ...d,
  percent: d.basis_points != null ? d.basis_points / 100 : null,
  amount_major: d.amount != null ? toMajor(d.amount, d.currency) : null,
  product_ids: d.products.map((p) => p.id),
});

const Fields = () => (
  <>
    <TextInput source="name" validate={required()} fullWidth />
    <TextInput source="code" label="Code" helperText="What buyers type at checkout; leave empty for link-only discounts" />
    <SelectInput source="type" choices={[{ id: 'percentage', name: 'Percentage' }, { id: 'fixed', name: 'Fixed amount' }]} validate={required()} />
    <FormDataConsumer<DiscountForm>>
      {({ formData }) =>
        formData.type === 'fixed' ? (
          <Box sx={{ display: 'flex', gap: 2 }}>
            <NumberInput source="amount_major" label="Amount off" validate={required()} />
            <SelectInput source="currency" choices={currencies} defaultValue="usd" />
          </Box>
        ) : (
          <NumberInput source="percent" label="Percent off" min={0.01} max={100} validate={required()} />
        )
      }
    </FormDataConsumer>
    <SelectInput
      source="duration"
      choices={[
        { id: 'once', name: 'Once' },
        { id: 'forever', name: 'Forever' },
        { id: 'repeating', name: 'For some months' },
      ]}
      validate={required()}
    />
    <FormDataConsumer<DiscountForm>>
      {({ formData }) => (formData.duration === 'repeating' ? <NumberInput source="duration_in_months" label="Months" min={1} validate={required()} /> : null)}
    </FormDataConsumer>
    <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap' }}>
      <DateTimeInput source="starts_at" parse={toIsoDateTime} label="Starts" />
      <DateTimeInput source="ends_at" parse={toIsoDateTime} label="Ends" />
      <NumberInput source="max_redemptions" label="Maximum redemptions" min={1} />
    </Box>
    <ReferenceArrayInput source="product_ids" reference="products" perPage={100}>
      <AutocompleteArrayInput optionText="name" label="Only for these products" helperText="Leave empty: every product" />
    </ReferenceArrayInput>
  </>
);

// Sortable by created_at, name, code and redemptions_count.
export const DiscountList = () => (
  <List filters={[<SearchInput key="q" source="q" alwaysOn />]} sort={{ field: 'created_at', order: 'DESC' }} actions={<TopToolbar><CreateButton /></TopToolbar>}>
    <DataTable<Discount> rowClick="edit" bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col source="code" render={(d) => d.code ?? '—'} />
      <DataTable.Col label="Discount" render={describeDiscount} />
      <DataTable.Col source="redemptions_count" label="Redemptions" render={(d) => `${d.redemptions_count}${d.max_redemptions ? ` / ${d.max_redemptions}` : ''}`} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);

export const DiscountCreate = () => (
  <Create transform={toBody} redirect="list">
    <SimpleForm defaultValues={{ type: 'percentage', duration: 'once', currency: 'usd' }}>
      <Fields />
    </SimpleForm>
  </Create>
);

export const DiscountEdit = () => (
  <Edit transform={toBody} mutationMode="pessimistic" redirect="list" queryOptions={{ select: toForm as never }} actions={<TopToolbar><DeleteButton mutationMode="pessimistic" /></TopToolbar>}>
    <SimpleForm>
      <Fields />
    </SimpleForm>
  </Edit>
);
