import type { ResourceProps } from 'react-admin';
import { OrganizationList } from './OrganizationList.tsx';

export const organizations: ResourceProps = {
  name: 'organizations',
  list: OrganizationList,
  recordRepresentation: 'name',
};
