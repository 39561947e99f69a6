/**
 * Create and edit a product: name, billing, every price type (fixed, pay-what-you-want, free, metered),
 * images, checkout custom fields and benefits. Amounts are typed in major units of their currency.
 * Existing prices are kept by id; to change one, remove it and add another (the API archives it).
 */
import {
  ArrayInput,
  AutocompleteArrayInput,
  BooleanInput,
  Create,
  Edit,
  FormDataConsumer,
  NumberInput,
  ReferenceArrayInput,
  ReferenceInput,
  SelectInput,
  SimpleForm,
  SimpleFormIterator,
  TextInput,
  minLength,
  required,
  useRecordContext,
} from 'react-admin';
import { Typography } from '@mui/material';
import { currencies, recurringIntervals } from '../../common/choices.ts';
import { MediaInput } from './MediaInput.tsx';
import { priceFromForm, priceToForm, type PriceForm, type Product } from './price.ts';
import { TrialInputs, trialToBody, trialToForm, type TrialForm } from './trial.tsx';

const amountTypes = [
  { id: 'fixed', name: 'Fixed price' },
  { id: 'custom', name: 'Pay what you want' },
  { id: 'free', name: 'Free' },
  { id: 'metered_unit', name: 'Metered, per unit' },
];

interface ProductFormValues extends TrialForm {
  name: string;
  description?: string | null;
  recurring_interval: 'none' | 'month' | 'year';
  prices: PriceForm[];
  medias?: string[];
  attached_custom_fields?: { custom_field_id: string; required?: boolean }[];
  benefit_ids?: string[];
  is_archived?: boolean;
}

/** Form values → the API's product body (plus `benefit_ids`, which the data provider attaches separately). */
export const toProductBody = (data: ProductFormValues) => ({
  name: data.name.trim(),
  description: data.description?.trim() || null,
  recurring_interval: data.recurring_interval === 'none' ? null : data.recurring_interval,
  // A one-time product has no trial.
  ...trialToBody(data.recurring_interval === 'none' ? {} : data),
  prices: (data.prices ?? []).map(priceFromForm),
  medias: data.medias ?? [],
  attached_custom_fields: (data.attached_custom_fields ?? [])
    .filter((f) => f.custom_field_id)
    .map((f) => ({ custom_field_id: f.custom_field_id, required: !!f.required })),
  ...(data.benefit_ids ? { benefit_ids: data.benefit_ids } : {}),
  ...(data.is_archived !== undefined ? { is_archived: data.is_archived } : {}),
});

/** API product → form values. */
export const productToForm = (p: Product) => ({
  ...p,
  recurring_interval: p.recurring_interval ?? 'none',
  ...trialToForm(p),
  prices: p.prices.filter((price) => !price.is_archived).map(priceToForm),
  medias: p.medias.map((m) => m.id),
  attached_custom_fields: p.attached_custom_fields.map((f) => ({ custom_field_id: f.custom_field_id, required: f.required })),
  benefit_ids: p.benefits.map((b) => b.id),
  media_files: p.medias,
});

const money = (source: string, label: string, validate?: ReturnType<typeof required>) => (
  <NumberInput source={source} label={label} step={0.01} min={0} validate={validate} sx={{ minWidth: 140 }} />
);

const PriceInputs = () => (
  <FormDataConsumer<ProductFormValues>>
    {({ scopedFormData }) => {
      const price = scopedFormData as PriceForm | undefined;
      if (price?.id) {
        return (
          <Typography variant="body2" sx={{ py: 2 }}>
            {price.summary} <Typography component="span" variant="caption" sx={{ color: 'text.secondary' }}>(current price; remove it to archive it)</Typography>
          </Typography>
        );
      }
      const type = price?.amount_type ?? 'fixed';
      return (
        <>
          <SelectInput source="amount_type" label="Price type" choices={amountTypes} validate={required()} defaultValue="fixed" />
          {type !== 'free' ? <SelectInput source="price_currency" label="Currency" choices={currencies} defaultValue="usd" /> : null}
          {type === 'fixed' ? money('price_amount', 'Amount', required()) : null}
          {type === 'custom' ? (
            <>
              {money('minimum_amount', 'Minimum')}
              {money('maximum_amount', 'Maximum')}
              {money('preset_amount', 'Suggested amount')}
            </>
          ) : null}
          {type === 'metered_unit' ? (
            <>
              <ReferenceInput source="meter_id" reference="meters">
                <SelectInput optionText="name" label="Meter" validate={required()} />
              </ReferenceInput>
              <TextInput source="unit_amount" label="Price per unit" helperText="In major units, e.g. 0.002" validate={required()} />
              {money('cap_amount', 'Cap per period')}
            </>
          ) : null}
        </>
      );
    }}
  </FormDataConsumer>
);

const MediaFromRecord = () => {
  const record = useRecordContext<{ media_files?: Product['medias'] }>();
  return <MediaInput source="medias" initial={record?.media_files ?? []} />;
};

const ProductFields = ({ edit = false }: { edit?: boolean }) => (
  <>
    <TextInput source="name" validate={[required(), minLength(3)]} fullWidth />
    <TextInput source="description" multiline minRows={3} fullWidth />
    <SelectInput source="recurring_interval" label="Billing" choices={recurringIntervals} validate={required()} />
    <FormDataConsumer<ProductFormValues>>
      {({ formData }) =>
        formData.recurring_interval && formData.recurring_interval !== 'none' ? (
          <TrialInputs helperText="New subscribers start free, with their card saved, and pay when it ends (once per customer)" />
        ) : null
      }
    </FormDataConsumer>
    <ArrayInput source="prices" label="Prices" validate={required()}>
      <SimpleFormIterator inline disableReordering>
        <PriceInputs />
      </SimpleFormIterator>
    </ArrayInput>
    <MediaFromRecord />
    <ArrayInput source="attached_custom_fields" label="Checkout fields">
      <SimpleFormIterator inline disableReordering>
        <ReferenceInput source="custom_field_id" reference="custom-fields">
          <SelectInput optionText="name" label="Custom field" validate={required()} />
        </ReferenceInput>
        <BooleanInput source="required" label="Required" />
      </SimpleFormIterator>
    </ArrayInput>
    <ReferenceArrayInput source="benefit_ids" reference="benefits" perPage={100}>
      <AutocompleteArrayInput optionText="description" label="Benefits" helperText="Granted to every buyer of this product" />
    </ReferenceArrayInput>
    {edit ? <BooleanInput source="is_archived" label="Archived (hidden from new checkouts)" /> : null}
  </>
);

export const ProductCreate = () => (
  <Create transform={toProductBody} redirect="show">
    <SimpleForm defaultValues={{ recurring_interval: 'none', prices: [{ amount_type: 'fixed', price_currency: 'usd' }] }}>
      <ProductFields />
    </SimpleForm>
  </Create>
);

export const ProductEdit = () => (
  <Edit transform={toProductBody} mutationMode="pessimistic" redirect="show" queryOptions={{ select: productToForm as never }}>
    <SimpleForm>
      <ProductFields edit />
    </SimpleForm>
  </Edit>
);
