import { Admin, LoginWithEmail, Resource } from 'react-admin';
import { authProvider } from './authProvider.ts';
import { dataProvider } from './dataProvider.ts';
import { organizations } from './resources/organizations/index.ts';
import { products } from './resources/products/index.ts';

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
  </Admin>
);
