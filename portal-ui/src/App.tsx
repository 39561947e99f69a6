import { CheckoutPage } from './features/checkout/CheckoutPage.tsx';
import { PortalHome } from './features/portal/PortalHome.tsx';

type Route =
  | { page: 'checkout'; clientSecret: string }
  | { page: 'portal'; organizationSlug: string | undefined }
  | { page: 'not-found' };

/** `/checkout/:clientSecret` and `/portal/:organizationSlug?`; anything else is a 404. */
export function matchRoute(pathname: string): Route {
  let parts: string[];
  try {
    parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { page: 'not-found' }; // malformed percent-encoding
  }
  if (parts[0] === 'checkout' && parts.length === 2 && parts[1]) {
    return { page: 'checkout', clientSecret: parts[1] };
  }
  if (parts[0] === 'portal' && parts.length <= 2) {
    return { page: 'portal', organizationSlug: parts[1] };
  }
  return { page: 'not-found' };
}

function NotFound() {
  return (
    <main className="page">
      <h1>Page not found</h1>
      <p className="muted">The link you followed may be broken, or the page may have been removed.</p>
    </main>
  );
}

export function App() {
  const route = matchRoute(window.location.pathname);
  switch (route.page) {
    case 'checkout':
      return <CheckoutPage clientSecret={route.clientSecret} />;
    case 'portal':
      return <PortalHome organizationSlug={route.organizationSlug} />;
    default:
      return <NotFound />;
  }
}
