import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./Files.tsx');
export const files: ResourceProps = {
  name: 'files',
  list: lazyNamed(load, 'FileList'),
  edit: lazyNamed(load, 'FileEdit'),
  recordRepresentation: 'name',
};
