/** Custom fields asked at checkout: text, number, date, checkbox, select, with their form texts and bounds. */
import {
  ArrayInput,
  BooleanInput,
  Create,
  CreateButton,
  DataTable,
  DeleteButton,
  Edit,
  FormDataConsumer,
  List,
  NumberInput,
  SearchInput,
  SelectInput,
  SimpleForm,
  SimpleFormIterator,
  TextInput,
  TopToolbar,
  regex,
  required,
} from 'react-admin';
import { DateTimeField } from '../../common/money.tsx';

const types = ['text', 'number', 'date', 'checkbox', 'select'].map((t) => ({ id: t, name: t }));

const num = (v: unknown) => (v === '' || v === null || v === undefined ? undefined : Number(v));

/** Only the properties of the chosen type (the API refuses the others). */
const toBody = (d: { type: string; slug: string; name: string; properties?: Record<string, any> }) => {
  const p = d.properties ?? {};
  const common = {
    form_label: p.form_label || undefined,
    form_help_text: p.form_help_text || undefined,
    form_placeholder: p.form_placeholder || undefined,
  };
  const byType: Record<string, Record<string, unknown>> = {
    text: { textarea: !!p.textarea, min_length: num(p.min_length), max_length: num(p.max_length) },
    number: { ge: num(p.ge), le: num(p.le) },
    select: { options: (p.options ?? []).filter((o: { value?: string }) => o?.value) },
  };
  return { type: d.type, slug: d.slug.trim(), name: d.name.trim(), properties: { ...common, ...(byType[d.type] ?? {}) } };
};

const Fields = ({ edit = false }: { edit?: boolean }) => (
  <>
    <SelectInput source="type" choices={types} validate={required()} readOnly={edit} />
    <TextInput source="name" validate={required()} fullWidth />
    <TextInput source="slug" validate={[required(), regex(/^[a-z0-9_-]+$/, 'Lower-case letters, digits, - and _')]} helperText="The key in custom_field_data" />
    <TextInput source="properties.form_label" label="Label shown to buyers" fullWidth />
    <TextInput source="properties.form_help_text" label="Help text" fullWidth />
    <TextInput source="properties.form_placeholder" label="Placeholder" fullWidth />
    <FormDataConsumer<{ type: string }>>
      {({ formData }) => {
        switch (formData.type) {
          case 'text':
            return (
              <>
                <BooleanInput source="properties.textarea" label="Several lines" />
                <NumberInput source="properties.min_length" label="Minimum length" min={0} />
                <NumberInput source="properties.max_length" label="Maximum length" min={1} />
              </>
            );
          case 'number':
            return (
              <>
                <NumberInput source="properties.ge" label="At least" />
                <NumberInput source="properties.le" label="At most" />
              </>
            );
          case 'select':
            return (
              <ArrayInput source="properties.options" label="Options">
                <SimpleFormIterator inline disableReordering>
                  <TextInput source="value" label="Value" validate={required()} />
                  <TextInput source="label" label="Label" validate={required()} />
                </SimpleFormIterator>
              </ArrayInput>
            );
          default:
            return null;
        }
      }}
    </FormDataConsumer>
  </>
);

// Sortable by created_at, slug, name and type.
export const CustomFieldList = () => (
  <List
    filters={[<SearchInput key="q" source="q" alwaysOn />, <SelectInput key="type" source="type" choices={types} alwaysOn />]}
    sort={{ field: 'slug', order: 'ASC' }}
    actions={<TopToolbar><CreateButton /></TopToolbar>}
  >
    <DataTable rowClick="edit" bulkActionButtons={false}>
      <DataTable.Col source="name" />
      <DataTable.Col source="slug" />
      <DataTable.Col source="type" />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);

export const CustomFieldCreate = () => (
  <Create transform={toBody} redirect="list">
    <SimpleForm defaultValues={{ type: 'text' }}>
      <Fields />
    </SimpleForm>
  </Create>
);

export const CustomFieldEdit = () => (
  <Edit transform={toBody} mutationMode="pessimistic" redirect="list" actions={<TopToolbar><DeleteButton mutationMode="pessimistic" /></TopToolbar>}>
    <SimpleForm>
      <Fields edit />
    </SimpleForm>
  </Edit>
);
