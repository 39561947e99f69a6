import {
  ArrayField,
  BooleanField,
  DataTable,
  DateField,
  FunctionField,
  ReferenceField,
  Show,
  SimpleShowLayout,
  TextField,
} from 'react-admin';
import { formatInterval, formatPrice, type Price, type Product } from './price.ts';

export const ProductShow = () => (
  <Show>
    <SimpleShowLayout>
      <TextField source="name" />
      <TextField source="description" emptyText="—" />
      <ReferenceField source="organization_id" reference="organizations" label="Organization" link={false} />
      <FunctionField<Product> label="Billing" render={(record) => formatInterval(record.recurring_interval)} />
      <ArrayField source="prices">
        <DataTable<Price> bulkActionButtons={false} rowClick={false}>
          <DataTable.Col<Price> label="Amount" render={(price) => formatPrice(price)} />
          <DataTable.Col source="amount_type" label="Type" />
          <DataTable.Col source="is_archived" label="Archived" field={BooleanField} />
        </DataTable>
      </ArrayField>
      <BooleanField source="is_archived" label="Archived" />
      <DateField source="created_at" label="Created" showTime />
      <DateField source="modified_at" label="Modified" showTime emptyText="—" />
      <TextField source="id" label="ID" />
    </SimpleShowLayout>
  </Show>
);
