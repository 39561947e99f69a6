import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

export const orders: ResourceProps = {
  name: 'orders',
  list: lazyNamed(() => import('./OrderList.tsx'), 'OrderList'),
  show: lazyNamed(() => import('./OrderShow.tsx'), 'OrderShow'),
};

/** Refunds are read through their order; the resource exists for the data provider's cache. */
export const refunds: ResourceProps = { name: 'refunds' };
