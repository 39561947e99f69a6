/** The OAuth2 pages of the console: the consent page, OAuth applications, authorized apps. */
import './entry.ts';
import { lazyNamed } from '../common/lazy.ts';

export const ConsentPage = lazyNamed(() => import('./ConsentPage.tsx'), 'ConsentPage');
export const OAuthApplications = lazyNamed(() => import('./OAuthApplications.tsx'), 'OAuthApplications');
export const AuthorizedApps = lazyNamed(() => import('./AuthorizedApps.tsx'), 'AuthorizedApps');
