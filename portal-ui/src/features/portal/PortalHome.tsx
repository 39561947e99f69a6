import { useEffect, useState } from 'react';
import { ApiError, getJson } from '../../api.ts';

/** The signed-in customer, as served at /v1/customer-portal/customers/me. */
export interface PortalCustomer {
  id: string;
  email: string;
  name: string | null;
}

const STORAGE_KEY = 'emporia.customer_session_token';
const QUERY_PARAM = 'customer_session_token';

// Fallback when sessionStorage is unavailable (privacy modes, sandboxed frames).
let memoryToken: string | null = null;

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/**
 * A magic link lands here with `?customer_session_token=…`: keep the token for this tab and drop
 * it from the address bar (and so from history, bookmarks and referrers).
 */
export function takeSessionToken(): string | null {
  const url = new URL(window.location.href);
  const fromUrl = url.searchParams.get(QUERY_PARAM);
  if (fromUrl) {
    try {
      const s = storage();
      if (!s) throw new Error('sessionStorage unavailable');
      s.setItem(STORAGE_KEY, fromUrl);
    } catch {
      memoryToken = fromUrl; // privacy mode or quota: keep it for this page only
    }
    url.searchParams.delete(QUERY_PARAM);
    window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
    return fromUrl;
  }
  return storage()?.getItem(STORAGE_KEY) ?? memoryToken;
}

type State =
  | { kind: 'loading' }
  | { kind: 'error'; detail: string; status: number }
  | { kind: 'loaded'; customer: PortalCustomer };

export function PortalHome({ organizationSlug }: { organizationSlug?: string | undefined }) {
  const [token, setToken] = useState<string | null>(takeSessionToken);

  const signOut = () => {
    memoryToken = null;
    storage()?.removeItem(STORAGE_KEY);
    setToken(null);
  };

  return (
    <main className="page narrow">
      <h1>Customer portal</h1>
      {token ? <Customer token={token} onSignOut={signOut} /> : <SignIn organizationSlug={organizationSlug} />}
    </main>
  );
}

function SignIn({ organizationSlug }: { organizationSlug?: string | undefined }) {
  return (
    <section className="card" aria-labelledby="sign-in-heading">
      <h2 id="sign-in-heading">Sign in to your customer portal</h2>
      <p>
        Here you can see your orders and subscriptions{organizationSlug ? <> with <strong>{organizationSlug}</strong></> : null}.
      </p>
      <p className="muted">
        To sign in, open the link from the email sent to you after your purchase, or ask the seller for a new
        customer portal link. Links are personal and expire after a while.
      </p>
    </section>
  );
}

function Customer({ token, onSignOut }: { token: string; onSignOut: () => void }) {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    const controller = new AbortController();
    setState({ kind: 'loading' });
    getJson<PortalCustomer>('/v1/customer-portal/customers/me', { token, signal: controller.signal })
      .then((customer) => setState({ kind: 'loaded', customer }))
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        setState({
          kind: 'error',
          detail: error instanceof Error ? error.message : 'Something went wrong.',
          status: error instanceof ApiError ? error.status : 0,
        });
      });
    return () => controller.abort();
  }, [token]);

  if (state.kind === 'loading') return <p className="muted" role="status">Loading your account…</p>;

  if (state.kind === 'error') {
    return (
      <div className="notice error" role="alert">
        <p>{state.detail}</p>
        {state.status === 401 && <p className="muted small">Your link may have expired; request a new one.</p>}
        <button type="button" onClick={onSignOut}>
          Sign out
        </button>
      </div>
    );
  }

  const { customer } = state;
  return (
    <section className="card" aria-labelledby="account-heading">
      <h2 id="account-heading">Your account</h2>
      <dl className="details">
        <dt>Name</dt>
        <dd>{customer.name || '—'}</dd>
        <dt>Email</dt>
        <dd>{customer.email}</dd>
      </dl>
      <button type="button" onClick={onSignOut}>
        Sign out
      </button>
    </section>
  );
}
