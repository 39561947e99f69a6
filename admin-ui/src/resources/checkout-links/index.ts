import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./CheckoutLinks.tsx');
export const checkoutLinks: ResourceProps = {
  name: 'checkout-links',
  options: { label: 'Checkout links' },
  list: lazyNamed(load, 'CheckoutLinkList'),
  create: lazyNamed(load, 'CheckoutLinkCreate'),
  edit: lazyNamed(load, 'CheckoutLinkEdit'),
  show: lazyNamed(load, 'CheckoutLinkShow'),
  recordRepresentation: (l: { label?: string | null; url: string }) => l.label || l.url,
};
