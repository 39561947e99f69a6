import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./CustomFields.tsx');
export const customFields: ResourceProps = {
  name: 'custom-fields',
  options: { label: 'Custom fields' },
  list: lazyNamed(load, 'CustomFieldList'),
  create: lazyNamed(load, 'CustomFieldCreate'),
  edit: lazyNamed(load, 'CustomFieldEdit'),
  recordRepresentation: 'name',
};
