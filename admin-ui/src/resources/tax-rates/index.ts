import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./TaxRates.tsx');
export const taxRates: ResourceProps = {
  name: 'tax-rates',
  options: { label: 'Tax rates' },
  list: lazyNamed(load, 'TaxRateList'),
  create: lazyNamed(load, 'TaxRateCreate'),
};
