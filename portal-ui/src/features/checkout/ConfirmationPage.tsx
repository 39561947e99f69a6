/**
 * /checkout/:clientSecret/confirmation: waits (polling the public checkout) until the order is paid,
 * then shows what was bought and the granted benefits with the checkout's customer session token,
 * a link to the portal, and the seller's success_url when set ({CHECKOUT_ID} substituted).
 */
import { useEffect, useState } from 'react';
import { Link, useLocation, useParams } from 'react-router';
import { ApiError, errorMessage, getJson, type Page } from '../../api.ts';
import { Alert, Loading, OrgBadge } from '../../components/ui.tsx';
import { postToParent } from '../../lib/embed.ts';
import { formatDate, formatMoney } from '../../lib/format.ts';
import { getCheckoutToken, getPortalSession, setPortalSession } from '../../lib/session.ts';
import type { BenefitGrant, Checkout, Order } from '../../lib/types.ts';
import { GrantView } from '../benefits/BenefitViews.tsx';
import { GONE } from './CheckoutPage.tsx';
import { checkoutTrial } from './TrialTerms.tsx';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The seller's own success URL, or null when it is this page (the API's default, on PUBLIC_URL). */
export function sellerSuccessUrl(c: Checkout): string | null {
  if (!c.success_url) return null;
  try {
    const u = new URL(c.success_url, window.location.origin);
    if (u.pathname.replace(/\/+$/, '') === `/checkout/${c.client_secret}/confirmation`) return null;
  } catch {
    return null;
  }
  return c.success_url.replaceAll('{CHECKOUT_ID}', encodeURIComponent(c.id));
}

type State =
  | { kind: 'waiting'; checkout: Checkout | null }
  | { kind: 'failed'; checkout: Checkout }
  | { kind: 'succeeded'; checkout: Checkout }
  | { kind: 'error'; message: string };

export function ConfirmationPage() {
  const { clientSecret = '' } = useParams();
  const location = useLocation();
  const fromConfirm = (location.state as { checkout?: Checkout } | null)?.checkout ?? null;
  const token = getCheckoutToken(clientSecret) ?? fromConfirm?.customer_session_token ?? null;
  const [state, setState] = useState<State>({ kind: 'waiting', checkout: fromConfirm });

  useEffect(() => {
    let stopped = false;
    (async () => {
      for (let attempt = 0; !stopped; attempt++) {
        try {
          const c = await getJson<Checkout>(`/v1/checkouts/client/${encodeURIComponent(clientSecret)}`);
          if (stopped) return;
          if (c.status === 'succeeded') return setState({ kind: 'succeeded', checkout: c });
          if (c.status === 'failed') return setState({ kind: 'failed', checkout: c });
          if (c.status === 'open' || c.status === 'expired') {
            return setState({ kind: 'error', message: c.status === 'open' ? 'This checkout has not been paid yet.' : GONE });
          }
          setState({ kind: 'waiting', checkout: c });
        } catch (e) {
          if (stopped) return;
          if (e instanceof ApiError && (e.status === 404 || e.status === 410)) return setState({ kind: 'error', message: GONE });
          if (attempt > 5) return setState({ kind: 'error', message: errorMessage(e) });
        }
        await sleep(attempt < 20 ? 500 : 2000);
      }
    })();
    return () => {
      stopped = true;
    };
  }, [clientSecret]);

  const checkout = state.kind === 'error' ? null : state.checkout;

  useEffect(() => {
    if (state.kind !== 'succeeded') return;
    const c = state.checkout;
    const success = sellerSuccessUrl(c);
    postToParent(c.embed_origin, { event: 'success', successURL: success ?? window.location.href, redirect: success !== null });
    // The portal can show this purchase with the checkout's token until the buyer signs in.
    if (token && !getPortalSession(c.organization.slug)) {
      setPortalSession(c.organization.slug, { token, scope: 'checkout', email: c.customer_email ?? undefined });
    }
  }, [state, token]);

  return (
    <main className="page narrow confirmation">
      {checkout && <OrgBadge name={checkout.organization.name} avatarUrl={checkout.organization.avatar_url} />}
      {state.kind === 'waiting' && (
        <>
          <h1>Processing your payment…</h1>
          <Loading label="Confirming your payment. This takes a few seconds; keep this page open." />
        </>
      )}
      {state.kind === 'error' && (
        <>
          <h1>Checkout</h1>
          <Alert>
            <p>{state.message}</p>
            <p className="small">
              <Link to={`/checkout/${encodeURIComponent(clientSecret)}`}>Back to the checkout</Link>
            </p>
          </Alert>
        </>
      )}
      {state.kind === 'failed' && (
        <>
          <h1>Your payment could not be completed</h1>
          <Alert>
            <p>Nothing was kept from your card: any amount taken is refunded. Go back to the seller’s site to try again.</p>
          </Alert>
        </>
      )}
      {state.kind === 'succeeded' && <Purchase checkout={state.checkout} token={token} />}
    </main>
  );
}

function Purchase({ checkout, token }: { checkout: Checkout; token: string | null }) {
  const [orders, setOrders] = useState<Order[] | null>(null);
  const [grants, setGrants] = useState<BenefitGrant[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const expected = checkout.product.benefits.length;
  const portalUrl = `/portal/${encodeURIComponent(checkout.organization.slug)}`;
  const success = sellerSuccessUrl(checkout);

  useEffect(() => {
    if (!token) return;
    let stopped = false;
    (async () => {
      try {
        const o = await getJson<Page<Order>>('/v1/customer-portal/orders/?limit=10&sorting=-created_at', { token });
        if (!stopped) setOrders(o.items.filter((x) => x.checkout_id === checkout.id));
        // Grants are written just after the order: wait for every benefit of the product.
        for (let attempt = 0; !stopped; attempt++) {
          const g = await getJson<Page<BenefitGrant>>(`/v1/customer-portal/benefit-grants/?checkout_id=${checkout.id}&limit=100`, { token });
          const granted = g.items.filter((x) => x.is_granted);
          if (stopped) return;
          setGrants(g.items);
          if (granted.length >= expected || attempt >= 40) return;
          await sleep(attempt < 10 ? 300 : 1000);
        }
      } catch (e) {
        if (!stopped) setError(errorMessage(e));
      }
    })();
    return () => {
      stopped = true;
    };
  }, [token, checkout.id, expected]);

  const order = orders?.[0];
  const currency = order?.currency ?? checkout.currency ?? 'usd';
  const trial = checkoutTrial(checkout, checkout.product.recurring_interval ?? null);
  return (
    <>
      <h1>Thank you for your purchase!</h1>
      <p>
        {checkout.customer_email ? (
          <>
            A receipt is on its way to <strong>{checkout.customer_email}</strong>.
          </>
        ) : (
          'Your payment was received.'
        )}
      </p>
      <section className="card" aria-labelledby="bought-heading">
        <h2 id="bought-heading">{checkout.product.name}</h2>
        {trial ? (
          <p>
            Your <strong>{trial.label}</strong> has started: nothing was charged today.{' '}
            {trial.firstCharge !== null ? `The first charge, ${formatMoney(trial.firstCharge, currency)}, is on ${formatDate(trial.end)}.` : `The first charge is on ${formatDate(trial.end)}.`}
          </p>
        ) : order ? (
          <p>
            Paid <strong>{formatMoney(order.total_amount, currency)}</strong>
            {order.discount_amount ? ` (including a discount of ${formatMoney(order.discount_amount, currency)})` : ''}.
          </p>
        ) : (
          checkout.total_amount != null && <p>Total: {formatMoney(checkout.total_amount, currency)}</p>
        )}
        {checkout.product.is_recurring && <p className="muted small">Manage or cancel your subscription any time from your customer portal.</p>}
      </section>

      {expected > 0 && (
        <section aria-labelledby="benefits-heading">
          <h2 id="benefits-heading">Your benefits</h2>
          {!token && <p>Sign in to your customer portal to see your benefits.</p>}
          {error && <Alert>{error}</Alert>}
          {token && !grants && !error && <Loading label="Preparing your benefits…" />}
          {token && grants && grants.filter((g) => g.is_granted).length < expected && <Loading label="Preparing your benefits…" />}
          {token && grants?.filter((g) => g.is_granted).map((g) => <GrantView key={g.id} grant={g} token={token} />)}
        </section>
      )}

      <div className="actions">
        <a className="button" href={portalUrl}>
          Go to your customer portal
        </a>
        {success && (
          <a className="button primary" href={success} target={window.parent !== window ? '_top' : undefined}>
            Continue
          </a>
        )}
      </div>
    </>
  );
}
