import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

export const customers: ResourceProps = {
  name: 'customers',
  list: lazyNamed(() => import('./CustomerList.tsx'), 'CustomerList'),
  create: lazyNamed(() => import('./CustomerForm.tsx'), 'CustomerCreate'),
  edit: lazyNamed(() => import('./CustomerForm.tsx'), 'CustomerEdit'),
  show: lazyNamed(() => import('./CustomerShow.tsx'), 'CustomerShow'),
  recordRepresentation: 'email',
};
