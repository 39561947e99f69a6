import { useEffect, useState } from 'react';
import { ApiError, formatMoney, getJson } from '../../api.ts';

/** The public view of a checkout session, as served at /v1/checkouts/client/{client_secret}. */
export interface CheckoutPublic {
  id: string;
  status: 'open' | 'expired' | 'confirmed' | 'succeeded' | 'failed';
  client_secret: string;
  expires_at: string;
  amount: number;
  total_amount: number | null;
  currency: string;
  customer_email: string | null;
  product: { id: string; name: string; description: string | null };
  organization?: { name: string } | null;
}

type State =
  | { kind: 'loading' }
  | { kind: 'error'; detail: string | null }
  | { kind: 'loaded'; checkout: CheckoutPublic };

const GONE = 'This checkout does not exist or has expired.';

export function CheckoutPage({ clientSecret }: { clientSecret: string }) {
  const [state, setState] = useState<State>({ kind: 'loading' });

  useEffect(() => {
    const controller = new AbortController();
    getJson<CheckoutPublic>(`/v1/checkouts/client/${encodeURIComponent(clientSecret)}`, { signal: controller.signal })
      .then((checkout) => setState({ kind: 'loaded', checkout }))
      .catch((error: unknown) => {
        if (controller.signal.aborted) return;
        // A missing or expired checkout is the expected failure; anything else also gets its detail.
        const expected = error instanceof ApiError && [404, 410].includes(error.status);
        setState({ kind: 'error', detail: expected || !(error instanceof Error) ? null : error.message });
      });
    return () => controller.abort();
  }, [clientSecret]);

  return (
    <main className="page narrow">
      <h1>Checkout</h1>
      {state.kind === 'loading' && <p className="muted" role="status">Loading checkout…</p>}
      {state.kind === 'error' && <CheckoutUnavailable detail={state.detail} />}
      {state.kind === 'loaded' &&
        (state.checkout.status === 'expired' || Date.parse(state.checkout.expires_at) <= Date.now() ? (
          <CheckoutUnavailable detail={null} />
        ) : (
          <CheckoutForm checkout={state.checkout} />
        ))}
    </main>
  );
}

function CheckoutUnavailable({ detail }: { detail: string | null }) {
  return (
    <div className="notice error" role="alert">
      <p>{GONE}</p>
      {detail && <p className="muted small">{detail}</p>}
    </div>
  );
}

function CheckoutForm({ checkout }: { checkout: CheckoutPublic }) {
  const total = formatMoney(checkout.total_amount ?? checkout.amount, checkout.currency);
  const [email, setEmail] = useState(checkout.customer_email ?? '');

  return (
    <form className="card" onSubmit={(event) => event.preventDefault()} aria-label="Checkout">
      <section className="summary" aria-label="Order summary">
        {checkout.organization?.name && <p className="muted small">{checkout.organization.name}</p>}
        <h2>{checkout.product.name}</h2>
        {checkout.product.description && <p className="muted">{checkout.product.description}</p>}
        <p className="total">
          <span>Total</span>
          <strong data-testid="checkout-total">{total}</strong>
        </p>
      </section>

      <label className="field">
        <span>Email</span>
        <input
          type="email"
          name="customer_email"
          autoComplete="email"
          required
          value={email}
          onChange={(event) => setEmail(event.target.value)}
        />
      </label>

      {checkout.status === 'succeeded' || checkout.status === 'confirmed' ? (
        <p className="notice" role="status">This checkout has already been paid.</p>
      ) : (
        <button type="submit" className="primary" disabled>
          Pay {total}
        </button>
      )}
    </form>
  );
}
