import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Webhooks.tsx');
export const webhookEndpoints: ResourceProps = {
  name: 'webhook-endpoints',
  options: { label: 'Webhooks' },
  list: lazyNamed(load, 'WebhookList'),
  create: lazyNamed(load, 'WebhookCreate'),
  edit: lazyNamed(load, 'WebhookEdit'),
  show: lazyNamed(load, 'WebhookShow'),
  recordRepresentation: 'url',
};
