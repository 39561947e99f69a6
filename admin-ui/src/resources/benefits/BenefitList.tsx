import { CreateButton, DataTable, List, SearchInput, SelectInput, TopToolbar } from 'react-admin';
import { benefitTypeName, benefitTypes } from '../../common/choices.ts';
import { DateTimeField } from '../../common/money.tsx';

const filters = [
  <SearchInput key="q" source="q" alwaysOn />,
  <SelectInput key="type" source="type" label="Type" choices={benefitTypes} alwaysOn />,
];

// The API sorts benefits by created_at and description.
export const BenefitList = () => (
  <List filters={filters} actions={<TopToolbar><CreateButton /></TopToolbar>} sort={{ field: 'created_at', order: 'DESC' }}>
    <DataTable rowClick="show" bulkActionButtons={false}>
      <DataTable.Col source="description" />
      <DataTable.Col source="type" disableSort render={(r: { type: string }) => benefitTypeName(r.type)} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
    </DataTable>
  </List>
);
