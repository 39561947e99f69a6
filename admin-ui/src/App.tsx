import { Admin, CustomRoutes, LoginWithEmail, Resource, reactRouterProvider } from 'react-admin';
import { authProvider } from './authProvider.ts';
import { dataProvider } from './dataProvider.ts';
import { AcceptInvitation } from './invitations/AcceptInvitation.tsx';
import { organizations } from './resources/organizations/index.ts';
import { products } from './resources/products/index.ts';

const { Route } = reactRouterProvider;

export const App = () => (
  <Admin
    title="Emporia"
    authProvider={authProvider}
    dataProvider={dataProvider}
    loginPage={LoginWithEmail}
    requireAuth
    disableTelemetry
  >
    <Resource {...products} />
    <Resource {...organizations} />
    {/* Linked from invitation mails; signs in on its own, so outside the layout and its auth check. */}
    <CustomRoutes noLayout>
      <Route path="/accept-invitation/:id" element={<AcceptInvitation />} />
    </CustomRoutes>
  </Admin>
);
