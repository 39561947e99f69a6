// Over 400 lines: the portal's pages share one set of small display helpers; split it by page when one grows.
/** The portal's pages. Every amount and date comes from the API; nothing is computed here but display. */
import { lazy, Suspense, useEffect, useRef, useState, type FormEvent } from 'react';
import { Link, useParams, useSearchParams } from 'react-router';
import { ApiError, errorMessage, type Page } from '../../api.ts';
import { AddressFields, cleanAddress, guessCountry } from '../../components/AddressFields.tsx';
import { CARD_ERROR_KEYS, CardFields, sandboxConfirmationToken, TestModeBanner } from '../../components/CardFields.tsx';
import { Alert, Field, Loading } from '../../components/ui.tsx';
import { BRAND_NAMES, emptyCard, validateCard } from '../../lib/card.ts';
import { formatDate, formatMoney, formatRecurring } from '../../lib/format.ts';
import { subscriptionTerms } from '../../lib/trial.ts';
import type { Address, BenefitGrant, Order, PaymentMethod, PortalCustomer, Price, Subscription } from '../../lib/types.ts';
import { GrantView, isAccountGrant, needsAccount } from '../benefits/BenefitViews.tsx';
import type { StripeHandle } from '../checkout/StripePayment.tsx';
import { portalConfig, type PortalConfig } from '../../lib/config.ts';

const StripePayment = lazy(() => import('../checkout/StripePayment.tsx'));
import { PriceLabel } from '../checkout/ProductSummary.tsx';
import { isScopeError, usePortal, usePortalApi, useResource } from './context.ts';
import { UsageSection } from './UsagePage.tsx';

const STATUS_LABEL: Record<string, string> = {
  active: 'Active',
  trialing: 'Trial',
  past_due: 'Past due',
  canceled: 'Canceled',
  unpaid: 'Unpaid',
  incomplete: 'Incomplete',
  paid: 'Paid',
  pending: 'Pending',
  refunded: 'Refunded',
  partially_refunded: 'Partially refunded',
};

function Status({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{STATUS_LABEL[status] ?? status}</span>;
}

function ResourceError({ error }: { error: Error }) {
  const { session } = usePortal();
  if (session.scope === 'checkout' && isScopeError(error)) return <p className="muted">Sign in to see this.</p>;
  return <Alert>{error.message}</Alert>;
}

function PastDueNotice({ subscriptions }: { subscriptions: Subscription[] }) {
  const { slug } = usePortal();
  const pastDue = subscriptions.filter((s) => s.status === 'past_due');
  if (!pastDue.length) return null;
  return (
    <Alert kind="warning" title="A payment failed">
      <p>
        We could not charge your card for {pastDue.map((s) => s.product.name).join(', ')}. Update your card to keep your subscription: we will
        retry the payment automatically.
      </p>
      <Link className="button primary" to={`/portal/${slug}/payment-methods`}>
        Update your card
      </Link>
    </Alert>
  );
}

// ---- Overview ----------------------------------------------------------------------------------------

export function Overview() {
  const { slug } = usePortal();
  const me = useResource<PortalCustomer>('/v1/customer-portal/customers/me');
  const subs = useResource<Page<Subscription>>('/v1/customer-portal/subscriptions/?active=true&limit=20');
  const orders = useResource<Page<Order>>('/v1/customer-portal/orders/?limit=5&sorting=-created_at');
  const grants = useResource<Page<BenefitGrant>>('/v1/customer-portal/benefit-grants/?limit=20');
  const pastDue = useResource<Page<Subscription>>('/v1/customer-portal/subscriptions/?limit=20');
  return (
    <>
      <h1>{me.data?.name ? `Welcome back, ${me.data.name}` : 'Your account'}</h1>
      {pastDue.data && <PastDueNotice subscriptions={pastDue.data.items} />}
      <section aria-labelledby="ov-subs">
        <h2 id="ov-subs">Active subscriptions</h2>
        {subs.error ? (
          <ResourceError error={subs.error} />
        ) : !subs.data ? (
          <Loading />
        ) : subs.data.items.length === 0 ? (
          <p className="muted">No active subscriptions.</p>
        ) : (
          <ul className="cards">
            {subs.data.items.map((s) => (
              <li key={s.id} className="card">
                <h3>{s.product.name}</h3>
                <p>
                  {formatRecurring(s.amount, s.currency, s.recurring_interval)} <Status status={s.status} />
                </p>
                {subscriptionTerms(s).map((line) => (
                  <p key={line} className="muted small">
                    {line}
                  </p>
                ))}
              </li>
            ))}
          </ul>
        )}
        <Link to={`/portal/${slug}/subscriptions`}>Manage subscriptions</Link>
      </section>
      <section aria-labelledby="ov-orders">
        <h2 id="ov-orders">Recent orders</h2>
        {orders.error ? <ResourceError error={orders.error} /> : !orders.data ? <Loading /> : <OrderTable orders={orders.data.items} />}
        <Link to={`/portal/${slug}/orders`}>All orders</Link>
      </section>
      <section aria-labelledby="ov-benefits">
        <h2 id="ov-benefits">Benefits</h2>
        {grants.error ? (
          <ResourceError error={grants.error} />
        ) : !grants.data ? (
          <Loading />
        ) : grants.data.items.filter((g) => g.is_granted).length === 0 ? (
          <p className="muted">No benefits yet.</p>
        ) : (
          <ul>
            {grants.data.items
              .filter((g) => g.is_granted)
              .map((g) => (
                <li key={g.id}>{g.benefit.description}</li>
              ))}
          </ul>
        )}
        <Link to={`/portal/${slug}/benefits`}>See your benefits</Link>
      </section>
    </>
  );
}

// ---- Orders ------------------------------------------------------------------------------------------

function OrderTable({ orders }: { orders: Order[] }) {
  const { slug } = usePortal();
  if (!orders.length) return <p className="muted">No orders yet.</p>;
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Date</th>
            <th scope="col">Product</th>
            <th scope="col">Amount</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {orders.map((o) => (
            <tr key={o.id}>
              <td>{formatDate(o.created_at)}</td>
              <td>
                <Link to={`/portal/${slug}/orders/${o.id}`}>{o.product.name}</Link>
              </td>
              <td>{formatMoney(o.total_amount, o.currency)}</td>
              <td>
                <Status status={o.status} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function OrdersPage() {
  const [page, setPage] = useState(1);
  const orders = useResource<Page<Order>>(`/v1/customer-portal/orders/?limit=20&page=${page}&sorting=-created_at`);
  return (
    <>
      <h1>Orders</h1>
      {orders.error ? <ResourceError error={orders.error} /> : !orders.data ? <Loading /> : <OrderTable orders={orders.data.items} />}
      {orders.data && orders.data.pagination.max_page > 1 && (
        <div className="actions">
          <button type="button" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous page
          </button>
          <span className="muted">
            Page {page} of {orders.data.pagination.max_page}
          </span>
          <button type="button" disabled={page >= orders.data.pagination.max_page} onClick={() => setPage(page + 1)}>
            Next page
          </button>
        </div>
      )}
    </>
  );
}

const REASON_LABEL: Record<string, string> = {
  purchase: 'Purchase',
  subscription_create: 'New subscription',
  subscription_cycle: 'Subscription renewal',
  subscription_update: 'Plan change',
};

export function OrderPage() {
  const { orderId = '' } = useParams();
  const { slug } = usePortal();
  const call = usePortalApi();
  const order = useResource<Order>(`/v1/customer-portal/orders/${encodeURIComponent(orderId)}`);
  const [invoiceError, setInvoiceError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const downloadInvoice = async () => {
    setBusy(true);
    setInvoiceError(null);
    try {
      const { url } = await call<{ url: string }>('GET', `/v1/customer-portal/orders/${encodeURIComponent(orderId)}/invoice`);
      // A new tab (the portal stays open); where pop-ups are blocked, this tab.
      const opened = window.open(url, '_blank');
      if (opened) opened.opener = null;
      else window.location.assign(url);
    } catch (e) {
      setInvoiceError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  if (order.error) return <ResourceError error={order.error} />;
  if (!order.data) return <Loading />;
  const o = order.data;
  return (
    <>
      <p>
        <Link to={`/portal/${slug}/orders`}>← All orders</Link>
      </p>
      <h1>{o.product.name}</h1>
      <p>
        {formatDate(o.created_at)} · {REASON_LABEL[o.billing_reason] ?? o.billing_reason} · <Status status={o.status} />
      </p>
      <dl className="totals">
        {(o.items ?? []).map((i, n) => (
          <div key={n}>
            <dt>{i.label}</dt>
            <dd>{formatMoney(i.amount, o.currency)}</dd>
          </div>
        ))}
        <div>
          <dt>Subtotal</dt>
          <dd>{formatMoney(o.subtotal_amount, o.currency)}</dd>
        </div>
        {!!o.discount_amount && (
          <div>
            <dt>Discount</dt>
            <dd>−{formatMoney(o.discount_amount, o.currency)}</dd>
          </div>
        )}
        <div>
          <dt>Tax</dt>
          <dd>{formatMoney(o.tax_amount, o.currency)}</dd>
        </div>
        <div className="grand">
          <dt>Total</dt>
          <dd>{formatMoney(o.total_amount, o.currency)}</dd>
        </div>
        {!!o.refunded_amount && (
          <div>
            <dt>Refunded</dt>
            <dd>{formatMoney(o.refunded_amount, o.currency)}</dd>
          </div>
        )}
      </dl>
      <div className="actions">
        <button type="button" className="primary" onClick={() => void downloadInvoice()} disabled={busy}>
          {busy ? 'Preparing invoice…' : 'Download invoice (PDF)'}
        </button>
      </div>
      {invoiceError && <Alert>{invoiceError}</Alert>}
    </>
  );
}

// ---- Subscriptions ------------------------------------------------------------------------------------

const CANCEL_REASONS: [string, string][] = [
  ['too_expensive', 'Too expensive'],
  ['missing_features', 'Missing features'],
  ['switched_service', 'Switched to another service'],
  ['unused', 'I don’t use it enough'],
  ['customer_service', 'Customer service'],
  ['low_quality', 'Quality was lower than expected'],
  ['too_complex', 'Too complicated'],
  ['other', 'Other reason'],
];

export function SubscriptionsPage() {
  const subs = useResource<Page<Subscription>>('/v1/customer-portal/subscriptions/?limit=50&sorting=-started_at');
  return (
    <>
      <h1>Subscriptions</h1>
      {subs.data && <PastDueNotice subscriptions={subs.data.items} />}
      {subs.error ? (
        <ResourceError error={subs.error} />
      ) : !subs.data ? (
        <Loading />
      ) : subs.data.items.length === 0 ? (
        <p className="muted">You have no subscriptions.</p>
      ) : (
        <ul className="cards">
          {subs.data.items.map((s) => (
            <SubscriptionCard key={s.id} subscription={s} onChanged={subs.reload} />
          ))}
        </ul>
      )}
      <UsageSection hideWhenEmpty heading="Usage this period" />
    </>
  );
}

function SubscriptionCard({ subscription: s, onChanged }: { subscription: Subscription; onChanged: () => void }) {
  const { organization, products } = usePortal();
  const call = usePortalApi();
  const [mode, setMode] = useState<'view' | 'cancel' | 'change'>('view');
  const [reason, setReason] = useState('');
  const [comment, setComment] = useState('');
  const [target, setTarget] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const ended = s.status === 'canceled' || s.status === 'unpaid' || !!s.ended_at;
  const billable = ['active', 'trialing', 'past_due'].includes(s.status);
  const allowChange = organization.subscription_settings?.allow_customer_updates !== false;
  const options = products.filter(
    (p) => p.is_recurring && p.id !== s.product_id && p.prices.some((x) => !x.is_archived && x.amount_type !== 'custom' && x.amount_type !== 'metered_unit'),
  );

  const patch = async (body: Record<string, unknown>, message: string) => {
    setBusy(true);
    setError(null);
    try {
      await call('PATCH', `/v1/customer-portal/subscriptions/${s.id}`, body);
      setDone(message);
      setMode('view');
      onChanged();
    } catch (e) {
      setError(e instanceof ApiError && e.status === 403 ? `${e.message}` : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const cancel = (event: FormEvent) => {
    event.preventDefault();
    void patch(
      { cancel_at_period_end: true, ...(reason ? { cancellation_reason: reason } : {}), ...(comment.trim() ? { cancellation_comment: comment.trim() } : {}) },
      `Your subscription will end on ${formatDate(s.current_period_end)}.`,
    );
  };

  return (
    <li className={`card subscription${s.status === 'past_due' ? ' past-due' : ''}`} aria-label={s.product.name}>
      <div className="card-head">
        <h2 className="h3">{s.product.name}</h2>
        <Status status={s.status} />
      </div>
      <p>{formatRecurring(s.amount, s.currency, s.recurring_interval)}</p>
      {ended || s.status !== 'trialing' ? (
        <p className="muted small">
          {ended
            ? `Ended on ${formatDate(s.ended_at ?? s.ends_at)}`
            : s.cancel_at_period_end
              ? `Canceled — access until ${formatDate(s.ends_at ?? s.current_period_end)}`
              : `Next charge: ${formatMoney(s.amount, s.currency)} on ${formatDate(s.current_period_end)}`}
        </p>
      ) : (
        subscriptionTerms(s).map((line) => (
          <p key={line} className="muted small">
            {line}
          </p>
        ))
      )}
      {s.status === 'past_due' && (
        <p className="field-error">
          Your last payment failed. <Link to="../payment-methods">Update your card</Link> and we will retry it.
        </p>
      )}
      {done && <p role="status" className="success-text">{done}</p>}
      {error && <Alert>{error}</Alert>}

      {mode === 'view' && billable && !ended && (
        <div className="actions">
          {s.cancel_at_period_end ? (
            <button type="button" className="primary" disabled={busy} onClick={() => void patch({ cancel_at_period_end: false }, 'Your subscription will continue.')}>
              Resume subscription
            </button>
          ) : (
            <>
              {allowChange && options.length > 0 && (
                <button type="button" onClick={() => setMode('change')}>
                  Change plan
                </button>
              )}
              <button type="button" onClick={() => setMode('cancel')}>
                Cancel subscription
              </button>
            </>
          )}
        </div>
      )}

      {mode === 'cancel' && (
        <form onSubmit={cancel} className="inline-form" aria-label={`Cancel ${s.product.name}`}>
          <p>
            {s.status === 'trialing'
              ? `Your free trial stays active until ${formatDate(s.current_period_end)}, then ends. You will not be charged.`
              : `Your subscription stays active until ${formatDate(s.current_period_end)}, then ends. You will not be charged again.`}
          </p>
          <Field label="Why are you canceling?" optional>
            {(p) => (
              <select {...p} value={reason} onChange={(e) => setReason(e.target.value)}>
                <option value="">Choose a reason…</option>
                {CANCEL_REASONS.map(([v, l]) => (
                  <option key={v} value={v}>
                    {l}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Anything we could do better?" optional>
            {(p) => <textarea {...p} rows={3} value={comment} onChange={(e) => setComment(e.target.value)} maxLength={5000} />}
          </Field>
          <div className="actions">
            <button type="submit" className="danger" disabled={busy}>
              {busy ? 'Canceling…' : 'Confirm cancellation'}
            </button>
            <button type="button" onClick={() => setMode('view')}>
              Keep subscription
            </button>
          </div>
        </form>
      )}

      {mode === 'change' && (
        <form
          className="inline-form"
          aria-label={`Change plan of ${s.product.name}`}
          onSubmit={(e) => {
            e.preventDefault();
            if (target) void patch({ product_id: target }, 'Your plan is being changed.');
          }}
        >
          <fieldset>
            <legend>Choose a new plan</legend>
            {options.map((p) => {
              const price = p.prices.find((x) => !x.is_archived) as Price;
              return (
                <label key={p.id} className={`choice${target === p.id ? ' selected' : ''}`}>
                  <input type="radio" name={`plan-${s.id}`} value={p.id} checked={target === p.id} onChange={() => setTarget(p.id)} />
                  <span className="choice-name">{p.name}</span>
                  <span className="choice-price">
                    <PriceLabel price={price} />
                  </span>
                </label>
              );
            })}
          </fieldset>
          {target && <ProrationPreview subscription={s} productId={target} />}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy || !target}>
              {busy ? 'Changing…' : 'Confirm plan change'}
            </button>
            <button type="button" onClick={() => setMode('view')}>
              Keep current plan
            </button>
          </div>
        </form>
      )}
    </li>
  );
}

interface PlanChangePreview {
  amount: number;
  currency: string;
  recurring_interval: string;
  proration_behavior: 'invoice' | 'prorate';
  proration: { credit: number; debit: number; net: number };
  charged_now: { subtotal_amount: number; tax_amount: number; total_amount: number } | null;
  next_invoice_adjustment: number;
  current_period_end: string | null;
}

/** What the API will bill for the change, as it computes it (`POST …/subscriptions/{id}/preview`). */
function ProrationPreview({ subscription: s, productId }: { subscription: Subscription; productId: string }) {
  const call = usePortalApi();
  const [preview, setPreview] = useState<PlanChangePreview | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    setPreview(null);
    setError(null);
    call<PlanChangePreview>('POST', `/v1/customer-portal/subscriptions/${s.id}/preview`, { product_id: productId }).then(
      (p) => live && setPreview(p),
      (e: unknown) => live && setError(errorMessage(e)),
    );
    return () => {
      live = false;
    };
  }, [call, s.id, productId]);
  if (error) return <Alert>{error}</Alert>;
  if (!preview) return <Loading label="Calculating the price change…" />;
  const { credit, debit, net } = preview.proration;
  const money = (v: number) => formatMoney(v, preview.currency);
  return (
    <div className="proration" role="status">
      <p>
        New price: <strong>{formatRecurring(preview.amount, preview.currency, preview.recurring_interval)}</strong>, from your next renewal on{' '}
        {formatDate(preview.current_period_end)}.
      </p>
      <p>
        For the rest of this period: credit of {money(-credit)} for your current plan, charge of {money(debit)} for the new one.
      </p>
      <p>
        <strong>
          {preview.charged_now
            ? `You pay ${money(preview.charged_now.total_amount)} now${preview.charged_now.tax_amount ? ` (${money(preview.charged_now.subtotal_amount)} + ${money(preview.charged_now.tax_amount)} tax)` : ''}.`
            : net >= 0
              ? `${money(net)} is added to your next invoice.`
              : `${money(-net)} is credited on your next invoice.`}
        </strong>
      </p>
    </div>
  );
}

// ---- Benefits ----------------------------------------------------------------------------------------

const PLATFORM_NAMES: Record<string, string> = { github: 'GitHub', discord: 'Discord' };

export function BenefitsPage() {
  const { session } = usePortal();
  const grants = useResource<Page<BenefitGrant>>('/v1/customer-portal/benefit-grants/?limit=100');
  const [params] = useSearchParams();
  const connected = params.get('connected');
  const oauthError = params.get('oauth_error');
  // Granted benefits, and GitHub / Discord grants waiting for the customer's account or being set up with it.
  const shown = grants.data?.items.filter((g) => g.is_granted || (!g.is_revoked && isAccountGrant(g))) ?? [];
  const settingUp = shown.some((g) => !g.is_granted && !needsAccount(g));
  const { reload } = grants;
  useEffect(() => {
    if (!settingUp) return;
    const t = setTimeout(reload, 2000);
    return () => clearTimeout(t);
  }, [settingUp, reload, grants.data]);
  return (
    <>
      <h1>Benefits</h1>
      {connected && (
        <p role="status" className="success-text">
          Your {PLATFORM_NAMES[connected] ?? connected} account is connected. Access is being set up.
        </p>
      )}
      {oauthError && <Alert>Your account could not be connected ({oauthError}). Try again.</Alert>}
      {grants.error ? (
        <ResourceError error={grants.error} />
      ) : !grants.data ? (
        <Loading />
      ) : shown.length === 0 ? (
        <p className="muted">No benefits yet.</p>
      ) : (
        <div className="grants">
          {shown.map((g) => (
            <GrantView key={g.id} grant={g} token={session.token} manage />
          ))}
        </div>
      )}
    </>
  );
}

// ---- Payment methods ------------------------------------------------------------------------------------

export function PaymentMethodsPage() {
  const call = usePortalApi();
  const methods = useResource<Page<PaymentMethod>>('/v1/customer-portal/customers/me/payment-methods?limit=50');
  const [adding, setAdding] = useState(false);
  const [card, setCard] = useState(emptyCard);
  const [makeDefault, setMakeDefault] = useState(true);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  // The same card entry as the checkout: Stripe's Payment Element with the stripe processor.
  const [config, setConfig] = useState<PortalConfig | null>(null);
  useEffect(() => {
    portalConfig().then(setConfig, () => setConfig({ payment_processor: 'sandbox', stripe_publishable_key: null, oauth_platforms: [] }));
  }, []);
  const stripeMode = config?.payment_processor === 'stripe';
  const stripeRef = useRef<StripeHandle | null>(null);

  const add = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const errs = stripeMode ? {} : validateCard(card);
    setErrors(errs);
    if (Object.keys(errs).length) return;
    setBusy('add');
    try {
      let token: string;
      if (stripeMode) {
        if (!stripeRef.current) throw new Error('The card form is not ready: it could not be loaded from Stripe.');
        const me = await call<PortalCustomer>('GET', '/v1/customer-portal/customers/me');
        token = await stripeRef.current.createToken({ name: me.name ?? '', email: me.email, address: me.billing_address ?? { country: guessCountry() } });
      } else {
        token = await sandboxConfirmationToken(card);
      }
      await call('POST', '/v1/customer-portal/customers/me/payment-methods', { confirmation_token_id: token, set_default: makeDefault, return_url: window.location.href });
      setAdding(false);
      setCard(emptyCard);
      setStatus('Your card was added.');
      methods.reload();
    } catch (e) {
      if (e instanceof ApiError && e.status === 422) setErrors(Object.fromEntries(Object.entries(e.fieldErrors).map(([k, v]) => [CARD_ERROR_KEYS[k] ?? k, v])));
      else setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const remove = async (pm: PaymentMethod) => {
    setBusy(pm.id);
    setError(null);
    try {
      await call('DELETE', `/v1/customer-portal/customers/me/payment-methods/${pm.id}`);
      setStatus(`The ${BRAND_NAMES[pm.card.brand] ?? pm.card.brand} card ending in ${pm.card.last4} was removed.`);
      methods.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  const makeDefaultCard = async (pm: PaymentMethod) => {
    setBusy(pm.id);
    setError(null);
    try {
      await call('PATCH', `/v1/customer-portal/customers/me/payment-methods/${pm.id}`, { default: true });
      setStatus(`Your subscriptions will now be charged to the ${BRAND_NAMES[pm.card.brand] ?? pm.card.brand} card ending in ${pm.card.last4}.`);
      methods.reload();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };

  return (
    <>
      <h1>Payment methods</h1>
      {status && <p role="status" className="success-text">{status}</p>}
      {error && <Alert>{error}</Alert>}
      {methods.error ? (
        <ResourceError error={methods.error} />
      ) : !methods.data ? (
        <Loading />
      ) : methods.data.items.length === 0 ? (
        <p className="muted">No saved cards.</p>
      ) : (
        <ul className="cards">
          {methods.data.items.map((pm) => {
            const label = `${BRAND_NAMES[pm.card.brand] ?? pm.card.brand} ending in ${pm.card.last4}`;
            return (
              <li key={pm.id} className="card payment-method" aria-label={label}>
                <p>
                  <strong>{label}</strong> {pm.default && <span className="badge">Default</span>}
                </p>
                <p className="muted small">
                  Expires {String(pm.card.exp_month).padStart(2, '0')}/{pm.card.exp_year}
                </p>
                <div className="actions">
                  {!pm.default && (
                    <button type="button" className="small" onClick={() => void makeDefaultCard(pm)} disabled={busy !== null} aria-label={`Make default: ${label}`}>
                      Make default
                    </button>
                  )}
                  <button type="button" className="small" onClick={() => void remove(pm)} disabled={busy !== null} aria-label={`Remove ${label}`}>
                    Remove
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {adding ? (
        <form onSubmit={add} noValidate className="card" aria-label="Add a card">
          <h2 className="h3">Add a card</h2>
          {!config ? (
            <Loading />
          ) : stripeMode ? (
            config.stripe_publishable_key ? (
              <Suspense fallback={<Loading label="Loading the card form…" />}>
                <StripePayment publishableKey={config.stripe_publishable_key} handleRef={stripeRef} />
              </Suspense>
            ) : (
              <Alert>Card payments are not set up for this store yet. Please contact the seller.</Alert>
            )
          ) : (
            <>
              <TestModeBanner />
              <CardFields value={card} onChange={setCard} errors={errors} disabled={busy === 'add'} />
            </>
          )}
          <div className="field checkbox">
            <label>
              <input type="checkbox" checked={makeDefault} onChange={(e) => setMakeDefault(e.target.checked)} /> Use this card for my subscriptions
              (default)
            </label>
          </div>
          <div className="actions">
            <button type="submit" className="primary" disabled={busy === 'add'}>
              {busy === 'add' ? 'Saving…' : 'Save card'}
            </button>
            <button type="button" onClick={() => setAdding(false)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <button type="button" className="primary" onClick={() => setAdding(true)}>
          Add a card
        </button>
      )}
    </>
  );
}

// ---- Profile -----------------------------------------------------------------------------------------

export function ProfilePage() {
  const me = useResource<PortalCustomer>('/v1/customer-portal/customers/me');
  if (me.error) return <ResourceError error={me.error} />;
  if (!me.data) return <Loading />;
  return <ProfileForm customer={me.data} onSaved={me.reload} />;
}

function ProfileForm({ customer, onSaved }: { customer: PortalCustomer; onSaved: () => void }) {
  const call = usePortalApi();
  const [name, setName] = useState(customer.name ?? '');
  const [email, setEmail] = useState(customer.email);
  const [address, setAddress] = useState<Address>(customer.billing_address ?? { country: guessCountry() });
  const [taxId, setTaxId] = useState(customer.tax_id?.[0] ?? '');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setError(null);
    setStatus(null);
    try {
      await call('PATCH', '/v1/customer-portal/customers/me', {
        name: name.trim() || null,
        ...(email.trim() !== customer.email ? { email: email.trim() } : {}),
        billing_address: cleanAddress(address),
        tax_id: taxId.trim() || null,
      });
      setStatus('Your details were saved.');
      onSaved();
    } catch (e) {
      if (e instanceof ApiError && e.status === 422) setErrors(e.fieldErrors);
      else setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <h1>Profile</h1>
      <form onSubmit={save} noValidate className="card" aria-label="Profile">
        <Field label="Name" error={errors.name}>
          {(p) => <input {...p} name="name" autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />}
        </Field>
        <Field label="Email" error={errors.email}>
          {(p) => <input {...p} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} />}
        </Field>
        <AddressFields value={address} onChange={setAddress} errors={errors} prefix="billing_address" full />
        <Field label="Tax ID" optional error={errors.tax_id} hint="Your VAT or business tax number, shown on invoices.">
          {(p) => <input {...p} name="tax-id" value={taxId} onChange={(e) => setTaxId(e.target.value)} />}
        </Field>
        {error && <Alert>{error}</Alert>}
        {status && <p role="status" className="success-text">{status}</p>}
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
      </form>
    </>
  );
}
