import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Meters.tsx');
export const meters: ResourceProps = {
  name: 'meters',
  list: lazyNamed(load, 'MeterList'),
  create: lazyNamed(load, 'MeterCreate'),
  edit: lazyNamed(load, 'MeterEdit'),
  show: lazyNamed(load, 'MeterShow'),
  recordRepresentation: 'name',
};
