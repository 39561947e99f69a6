import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

export const events: ResourceProps = {
  name: 'events',
  list: lazyNamed(() => import('./Events.tsx'), 'EventList'),
};
