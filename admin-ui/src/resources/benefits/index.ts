import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

export const benefits: ResourceProps = {
  name: 'benefits',
  list: lazyNamed(() => import('./BenefitList.tsx'), 'BenefitList'),
  create: lazyNamed(() => import('./BenefitForm.tsx'), 'BenefitCreate'),
  edit: lazyNamed(() => import('./BenefitForm.tsx'), 'BenefitEdit'),
  show: lazyNamed(() => import('./BenefitShow.tsx'), 'BenefitShow'),
  recordRepresentation: 'description',
};
