/**
 * Checkout links: shareable URLs that open a checkout for one or more products. List (with the public
 * URL and a copy button), create, edit, show.
 */
import {
  AutocompleteArrayInput,
  BooleanInput,
  Create,
  CreateButton,
  DataTable,
  DeleteButton,
  Edit,
  EditButton,
  FunctionField,
  List,
  ReferenceArrayInput,
  ReferenceInput,
  SelectInput,
  Show,
  SimpleForm,
  SimpleShowLayout,
  TextField,
  TextInput,
  TopToolbar,
  required,
} from 'react-admin';
import { Box } from '@mui/material';
import { CopyButton } from '../../common/CopyButton.tsx';
import { DateTimeField } from '../../common/money.tsx';
import { TrialInputs, formatTrial, trialToBody, trialToForm, type TrialFields, type TrialForm } from '../products/trial.tsx';

interface CheckoutLink extends TrialFields {
  id: string;
  label: string | null;
  url: string;
  allow_discount_codes: boolean;
  success_url: string | null;
  discount_id: string | null;
  products: { id: string; name: string }[];
  created_at: string;
}

interface LinkForm extends TrialForm {
  label?: string | null;
  product_ids: string[];
  allow_discount_codes: boolean;
  discount_id?: string | null;
  success_url?: string | null;
}

const toBody = (d: LinkForm) => ({
  label: d.label?.trim() || null,
  products: d.product_ids ?? [],
  allow_discount_codes: !!d.allow_discount_codes,
  discount_id: d.discount_id || null,
  success_url: d.success_url?.trim() || null,
  ...trialToBody(d),
});

const toForm = (l: CheckoutLink) => ({ ...l, ...trialToForm(l), product_ids: l.products.map((p) => p.id) });

const productNames = (l: CheckoutLink) => l.products.map((p) => p.name).join(', ') || '—';

const UrlCell = ({ link }: { link: CheckoutLink }) => (
  <Box sx={{ display: 'flex', alignItems: 'center', gap: 0.5 }}>
    <Box component="span" sx={{ wordBreak: 'break-all', fontFamily: 'monospace', fontSize: 13 }}>
      {link.url}
    </Box>
    <CopyButton value={link.url} what="Checkout link" label="Copy checkout link" icon />
  </Box>
);

const filters = [
  <ReferenceInput key="product_id" source="product_id" reference="products" alwaysOn>
    <SelectInput optionText="name" label="Product" />
  </ReferenceInput>,
];

// Sortable by created_at, label, success_url and allow_discount_codes.
export const CheckoutLinkList = () => (
  <List filters={filters} actions={<TopToolbar><CreateButton /></TopToolbar>} sort={{ field: 'created_at', order: 'DESC' }}>
    <DataTable<CheckoutLink> rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="label" render={(l) => l.label || '—'} />
      <DataTable.Col<CheckoutLink> label="Products" render={(l) => productNames(l)} />
      <DataTable.Col<CheckoutLink> source="url" label="Public URL" disableSort render={(l) => <UrlCell link={l} />} />
      <DataTable.Col<CheckoutLink> source="trial_interval" label="Trial" disableSort render={(l) => formatTrial(l, "Product's")} />
      <DataTable.Col source="allow_discount_codes" label="Discount codes" render={(l) => (l.allow_discount_codes ? 'Allowed' : 'Not allowed')} />
      <DataTable.Col source="success_url" label="Success URL" render={(l) => l.success_url ?? '—'} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);

const Fields = () => (
  <>
    <ReferenceArrayInput source="product_ids" reference="products" perPage={100} filter={{ is_archived: false }}>
      <AutocompleteArrayInput optionText="name" label="Products" validate={required()} helperText="The buyer picks one when there are several" />
    </ReferenceArrayInput>
    <TextInput source="label" label="Label" helperText="For you only, e.g. “Newsletter launch”" />
    <BooleanInput source="allow_discount_codes" label="Allow discount codes" />
    <ReferenceInput source="discount_id" reference="discounts">
      <SelectInput optionText="name" label="Preset discount" emptyText="None" />
    </ReferenceInput>
    <TextInput source="success_url" label="Success URL" type="url" helperText="Where buyers land after paying; {CHECKOUT_ID} is replaced" fullWidth />
    <TrialInputs noneLabel="The product's trial" helperText="A trial here overrides the product's for buyers of this link (recurring products only)" />
  </>
);

export const CheckoutLinkCreate = () => (
  <Create transform={toBody} redirect="show">
    <SimpleForm defaultValues={{ allow_discount_codes: true, product_ids: [] }}>
      <Fields />
    </SimpleForm>
  </Create>
);

export const CheckoutLinkEdit = () => (
  <Edit transform={toBody} mutationMode="pessimistic" redirect="show" queryOptions={{ select: toForm as never }}>
    <SimpleForm>
      <Fields />
    </SimpleForm>
  </Edit>
);

export const CheckoutLinkShow = () => (
  <Show actions={<TopToolbar><EditButton /><DeleteButton mutationMode="pessimistic" /></TopToolbar>}>
    <SimpleShowLayout>
      <TextField source="label" emptyText="—" />
      <FunctionField<CheckoutLink> label="Public URL" render={(l) => <UrlCell link={l} />} />
      <FunctionField<CheckoutLink> label="Products" render={productNames} />
      <FunctionField<CheckoutLink> label="Free trial" render={(l) => formatTrial(l, "The product's")} />
      <FunctionField<CheckoutLink> label="Discount codes" render={(l) => (l.allow_discount_codes ? 'Allowed' : 'Not allowed')} />
      <TextField source="success_url" label="Success URL" emptyText="—" />
      <DateTimeField source="created_at" label="Created" />
    </SimpleShowLayout>
  </Show>
);
