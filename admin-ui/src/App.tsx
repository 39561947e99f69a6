/**
 * The seller console, as a table of contents: the entry pages, the frame, then one resource per
 * folder under resources/ (each loaded on first use) and the pages that are not CRUD.
 */
import { Admin, Authenticated, CustomRoutes, Resource, reactRouterProvider } from 'react-admin';
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
import { organizations } from './resources/organizations/index.ts';

const { Route } = reactRouterProvider;
const Dashboard = lazyNamed(() => import('./dashboard/Dashboard.tsx'), 'Dashboard');

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
    <Resource {...organizations} />
    <CustomRoutes noLayout>
      <Route path="/sign-up" element={<SignUpPage />} />
      <Route path="/forgot-password" element={<ForgotPasswordPage />} />
      <Route path="/reset-password" element={<ResetPasswordPage />} />
      {/* Linked from invitation mails; signs in on its own, so outside the layout and its auth check. */}
      <Route path="/accept-invitation/:id" element={<AcceptInvitation />} />
      <Route path="/welcome" element={<Authenticated><CreateOrganizationPage /></Authenticated>} />
    </CustomRoutes>
  </Admin>
);
