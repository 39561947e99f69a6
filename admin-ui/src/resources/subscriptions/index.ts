import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Subscriptions.tsx');
export const subscriptions: ResourceProps = {
  name: 'subscriptions',
  list: lazyNamed(load, 'SubscriptionList'),
  show: lazyNamed(load, 'SubscriptionShow'),
};
