import type { ResourceProps } from 'react-admin';
import CategoryIcon from '@mui/icons-material/Category';
import { lazyNamed } from '../../common/lazy.ts';

export const products: ResourceProps = {
  name: 'products',
  icon: CategoryIcon,
  list: lazyNamed(() => import('./ProductList.tsx'), 'ProductList'),
  create: lazyNamed(() => import('./ProductForm.tsx'), 'ProductCreate'),
  edit: lazyNamed(() => import('./ProductForm.tsx'), 'ProductEdit'),
  show: lazyNamed(() => import('./ProductShow.tsx'), 'ProductShow'),
  recordRepresentation: 'name',
};
