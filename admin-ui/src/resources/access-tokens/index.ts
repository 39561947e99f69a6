import type { ResourceProps } from 'react-admin';
import { lazyNamed } from '../../common/lazy.ts';

export const accessTokens: ResourceProps = {
  name: 'access-tokens',
  options: { label: 'Access tokens' },
  list: lazyNamed(() => import('./AccessTokens.tsx'), 'AccessTokenList'),
};
