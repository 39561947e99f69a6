import { lazy, StrictMode, Suspense } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Route, Routes } from 'react-router';
import { Loading } from './components/ui.tsx';
import { CheckoutPage } from './features/checkout/CheckoutPage.tsx';
import { ConfirmationPage } from './features/checkout/ConfirmationPage.tsx';
import './styles.css';

// The portal is its own chunk: a buyer on the checkout never downloads it.
const Portal = lazy(() => import('./features/portal/Portal.tsx'));

function NotFound() {
  return (
    <main className="page narrow">
      <h1>Page not found</h1>
      <p className="muted">The link you followed may be broken, or the page may have been removed.</p>
    </main>
  );
}

const portal = (
  <Suspense
    fallback={
      <main className="page narrow">
        <h1>Customer portal</h1>
        <Loading />
      </main>
    }
  >
    <Portal />
  </Suspense>
);

export function App() {
  return (
    <BrowserRouter>
      <Routes>
        <Route path="/checkout/:clientSecret" element={<CheckoutPage />} />
        <Route path="/checkout/:clientSecret/confirmation" element={<ConfirmationPage />} />
        <Route path="/portal" element={portal} />
        <Route path="/portal/:slug/*" element={portal} />
        <Route path="*" element={<NotFound />} />
      </Routes>
    </BrowserRouter>
  );
}

const root = document.getElementById('root');
if (!root) throw new Error('Missing #root element');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
