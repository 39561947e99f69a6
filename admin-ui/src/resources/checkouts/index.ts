import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Checkouts.tsx');
export const checkouts: ResourceProps = {
  name: 'checkouts',
  list: lazyNamed(load, 'CheckoutList'),
  show: lazyNamed(load, 'CheckoutShow'),
};
