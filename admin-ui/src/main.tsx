import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App.tsx';

// Links from mails come back through the auth service with query parameters (it only accepts plain
// paths as redirect targets): turn them into the console's hash routes.
const query = new URLSearchParams(window.location.search);
if (query.get('page') === 'reset-password') {
  const rest = new URLSearchParams();
  for (const key of ['token', 'error']) if (query.get(key)) rest.set(key, query.get(key)!);
  window.history.replaceState(null, '', `${window.location.pathname}#/reset-password?${rest}`);
} else if (query.has('verified')) {
  window.history.replaceState(null, '', `${window.location.pathname}${window.location.hash || '#/'}`);
}

const root = document.getElementById('root');
if (!root) throw new Error('Missing #root element');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
