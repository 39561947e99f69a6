import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

const load = () => import('./LicenseKeys.tsx');
export const licenseKeys: ResourceProps = {
  name: 'license-keys',
  options: { label: 'License keys' },
  list: lazyNamed(load, 'LicenseKeyList'),
  edit: lazyNamed(load, 'LicenseKeyEdit'),
  recordRepresentation: 'display_key',
};
