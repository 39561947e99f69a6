import {
  Create,
  minLength,
  minValue,
  NumberInput,
  ReferenceInput,
  regex,
  required,
  SelectInput,
  SimpleForm,
  TextInput,
} from 'react-admin';
import { recurringIntervals } from './price.ts';

interface ProductForm {
  organization_id: string;
  name: string;
  description?: string | null;
  recurring_interval: 'none' | 'month' | 'year';
  price_amount: number;
  price_currency: string;
}

/** Form values → the API's product create body; the price is entered in major units. */
export const toProductCreate = (data: ProductForm) => ({
  organization_id: data.organization_id,
  name: data.name.trim(),
  description: data.description?.trim() || null,
  recurring_interval: data.recurring_interval === 'none' ? null : data.recurring_interval,
  prices: [
    {
      amount_type: 'fixed' as const,
      price_amount: Math.round(Number(data.price_amount) * 100),
      price_currency: (data.price_currency || 'usd').trim().toLowerCase(),
    },
  ],
});

export const ProductCreate = () => (
  <Create<ProductForm> transform={toProductCreate} redirect="show">
    <SimpleForm defaultValues={{ recurring_interval: 'none', price_currency: 'usd' }}>
      <ReferenceInput source="organization_id" reference="organizations" sort={{ field: 'name', order: 'ASC' }}>
        <SelectInput optionText="name" label="Organization" validate={required()} />
      </ReferenceInput>
      <TextInput source="name" validate={[required(), minLength(3)]} />
      <TextInput source="description" multiline minRows={3} />
      <SelectInput source="recurring_interval" label="Billing" choices={recurringIntervals} validate={required()} />
      <NumberInput
        source="price_amount"
        label="Price"
        helperText="In major units, e.g. 19.99"
        step={0.01}
        validate={[required(), minValue(0.5)]}
      />
      <TextInput
        source="price_currency"
        label="Currency"
        validate={[required(), regex(/^[a-zA-Z]{3}$/, 'Three-letter ISO 4217 code, e.g. usd')]}
      />
    </SimpleForm>
  </Create>
);
