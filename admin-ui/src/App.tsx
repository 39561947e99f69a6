/**
 * The seller console, as a table of contents: the entry pages, the frame, then one resource per
 * folder under resources/ (each loaded on first use) and the pages that are not CRUD.
 */
import { Suspense } from 'react';
import { Admin, Authenticated, CustomRoutes, Resource, reactRouterProvider, type DashboardComponent } from 'react-admin';
import { authProvider } from './auth/authProvider.ts';
import { dataProvider } from './dataProvider.ts';
import { theme } from './layout/theme.ts';
import { Layout } from './layout/Layout.tsx';
import { lazyNamed } from './common/lazy.ts';
// Entry: sign in, sign up, forgotten password, first organization, invitations.
import { LoginPage } from './auth/LoginPage.tsx';
import { SignUpPage } from './auth/SignUpPage.tsx';
import { ForgotPasswordPage, ResetPasswordPage } from './auth/PasswordPages.tsx';
import { CreateOrganizationPage } from './auth/CreateOrganizationPage.tsx';
import { AcceptInvitation } from './invitations/AcceptInvitation.tsx';
// Selling
import { products } from './resources/products/index.ts';
import { benefits } from './resources/benefits/index.ts';
import { checkoutLinks } from './resources/checkout-links/index.ts';
import { checkouts } from './resources/checkouts/index.ts';
// Getting paid
import { customers } from './resources/customers/index.ts';
import { orders, refunds } from './resources/orders/index.ts';
import { subscriptions } from './resources/subscriptions/index.ts';
// Tools
import { discounts } from './resources/discounts/index.ts';
import { customFields } from './resources/custom-fields/index.ts';
import { licenseKeys } from './resources/license-keys/index.ts';
import { meters } from './resources/meters/index.ts';
import { events } from './resources/events/index.ts';
import { files } from './resources/files/index.ts';
import { taxRates } from './resources/tax-rates/index.ts';
// Developers
import { accessTokens } from './resources/access-tokens/index.ts';
import { webhookEndpoints } from './resources/webhooks/index.ts';
// OAuth2: consent page, OAuth applications, authorized apps
import { AuthorizedApps, ConsentPage, OAuthApplications } from './oauth2/index.ts';
// Settings
import { organizations } from './resources/organizations/index.ts';

const { Route } = reactRouterProvider;
const Settings = lazyNamed(() => import('./settings/Settings.tsx'), 'Settings');
const AccountPage = lazyNamed(() => import('./account/AccountPage.tsx'), 'AccountPage');
const AdminUsers = lazyNamed(() => import('./admin/AdminUsers.tsx'), 'AdminUsers');
const Dashboard = lazyNamed(() => import('./dashboard/Dashboard.tsx'), 'Dashboard') as DashboardComponent;

export const App = () => (
  <Admin
    title="Emporia"
    authProvider={authProvider}
    dataProvider={dataProvider}
    loginPage={LoginPage}
    layout={Layout}
    dashboard={Dashboard}
    theme={theme}
    requireAuth
    disableTelemetry
  >
    <Resource {...products} />
    <Resource {...benefits} />
    <Resource {...checkoutLinks} />
    <Resource {...checkouts} />
    <Resource {...customers} />
    <Resource {...orders} />
    <Resource {...refunds} />
    <Resource {...subscriptions} />
    <Resource {...discounts} />
    <Resource {...customFields} />
    <Resource {...licenseKeys} />
    <Resource {...meters} />
    <Resource {...events} />
    <Resource {...files} />
    <Resource {...taxRates} />
    <Resource {...accessTokens} />
    <Resource {...webhookEndpoints} />
    <Resource {...organizations} />
    <CustomRoutes>
      <Route path="/settings" element={<Settings />} />
      <Route path="/oauth2/applications" element={<OAuthApplications />} />
      <Route path="/oauth2/authorized" element={<AuthorizedApps />} />
      <Route path="/account" element={<AccountPage />} />
      <Route path="/admin/users" element={<AdminUsers />} />
    </CustomRoutes>
    <CustomRoutes noLayout>
      <Route path="/sign-up" element={<SignUpPage />} />
      <Route path="/forgot-password" element={<ForgotPasswordPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      {/* Linked from invitation mails; signs in on its own, so outside the layout and its auth check. */}
      <Route path="/accept-invitation/:id" element={<AcceptInvitation />} />
      <Route path="/welcome" element={<Authenticated><CreateOrganizationPage /></Authenticated>} />
      <Route path="/oauth2/authorize" element={<Authenticated><Suspense fallback={null}><ConsentPage /></Suspense></Authenticated>} />
    </CustomRoutes>
  </Admin>
);
