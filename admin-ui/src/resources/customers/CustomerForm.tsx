/** Create and edit a customer: email, name, external id, billing address, tax id, metadata. */
import { ArrayInput, Create, Edit, SimpleForm, SimpleFormIterator, TextInput, email, required } from 'react-admin';
import { Box, Typography } from '@mui/material';

interface CustomerValues {
  email: string;
  name?: string | null;
  external_id?: string | null;
  billing_address?: { line1?: string; line2?: string; postal_code?: string; city?: string; state?: string; country?: string } | null;
  tax_id_value?: string | null;
  tax_id_type?: string | null;
  metadata_pairs?: { key: string; value: string }[];
}

const clean = (v: string | null | undefined) => (v && v.trim() ? v.trim() : null);

export function toCustomerBody(d: CustomerValues) {
  const a = d.billing_address ?? {};
  const hasAddress = Object.values(a).some((v) => v && String(v).trim());
  return {
    email: d.email.trim(),
    name: clean(d.name),
    external_id: clean(d.external_id),
    billing_address: hasAddress
      ? {
          line1: clean(a.line1),
          line2: clean(a.line2),
          postal_code: clean(a.postal_code),
          city: clean(a.city),
          state: clean(a.state),
          country: (clean(a.country) ?? '').toUpperCase(),
        }
      : null,
    tax_id: clean(d.tax_id_value) ? [clean(d.tax_id_value), clean(d.tax_id_type)?.toLowerCase() ?? null] : null,
    metadata: Object.fromEntries((d.metadata_pairs ?? []).filter((p) => p.key?.trim()).map((p) => [p.key.trim(), p.value ?? ''])),
  };
}

export const customerToForm = (c: { tax_id: [string, string | null] | null; metadata: Record<string, unknown> }) => ({
  ...c,
  tax_id_value: c.tax_id?.[0] ?? '',
  tax_id_type: c.tax_id?.[1] ?? '',
  metadata_pairs: Object.entries(c.metadata ?? {}).map(([key, value]) => ({ key, value: String(value) })),
});

const Fields = () => (
  <>
    <TextInput source="email" type="email" validate={[required(), email()]} fullWidth />
    <TextInput source="name" fullWidth />
    <TextInput source="external_id" label="External ID" helperText="Your own id for this customer (e.g. your user id)" fullWidth />
    <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
      Billing address
    </Typography>
    <TextInput source="billing_address.line1" label="Address line 1" fullWidth />
    <TextInput source="billing_address.line2" label="Address line 2" fullWidth />
    <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', width: '100%' }}>
      <TextInput source="billing_address.postal_code" label="Postal code" />
      <TextInput source="billing_address.city" label="City" />
      <TextInput source="billing_address.state" label="State / region" />
      <TextInput source="billing_address.country" label="Country" helperText="Two-letter code, e.g. US" />
    </Box>
    <Typography variant="subtitle2" component="h3" sx={{ mt: 2 }}>
      Tax ID
    </Typography>
    <Box sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', width: '100%' }}>
      <TextInput source="tax_id_value" label="Tax ID" />
      <TextInput source="tax_id_type" label="Tax ID type" helperText="e.g. eu_vat, us_ein, gb_vat" />
    </Box>
    <ArrayInput source="metadata_pairs" label="Metadata">
      <SimpleFormIterator inline disableReordering>
        <TextInput source="key" label="Key" validate={required()} />
        <TextInput source="value" label="Value" />
      </SimpleFormIterator>
    </ArrayInput>
  </>
);

export const CustomerCreate = () => (
  <Create transform={toCustomerBody} redirect="show">
    <SimpleForm>
      <Fields />
    </SimpleForm>
  </Create>
);

export const CustomerEdit = () => (
  <Edit transform={toCustomerBody} mutationMode="pessimistic" redirect="show" queryOptions={{ select: customerToForm as never }}>
    <SimpleForm>
      <Fields />
    </SimpleForm>
  </Edit>
);
