import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Discounts.tsx');
export const discounts: ResourceProps = {
  name: 'discounts',
  list: lazyNamed(load, 'DiscountList'),
  create: lazyNamed(load, 'DiscountCreate'),
  edit: lazyNamed(load, 'DiscountEdit'),
  recordRepresentation: 'name',
};
