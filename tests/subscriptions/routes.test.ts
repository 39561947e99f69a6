/**
 * Seller and customer changes to a subscription through `@polar-sh/sdk` 0.29.3, over HTTP against the
 * real API and worker, after a real confirmed checkout: cancel at period end / uncancel / revoke,
 * product changes, the error statuses (403 AlreadyCanceledSubscription, 410, 400, 422 on
 * `body.product_id`, 404 across organizations and customers), the customer portal's own list, and
 * the CSV export.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { AlreadyCanceledSubscription } from '@polar-sh/sdk/models/errors/alreadycanceledsubscription.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, call, fulfilled, until, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let a: Seller;
let b: Seller;
let pub: Polar;
const started: string[] = [];

const SCOPES = [...CONFIRM_SCOPES, 'subscriptions:write', 'customer_sessions:write'];
const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

beforeAll(async () => {
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '12' } });
  a = await sellerWithSdk(srv, SCOPES);
  b = await sellerWithSdk(srv, SCOPES);
  pub = new Polar({ serverURL: srv.url });
});
afterAll(async () => {
  // The subscriptions' workflows would otherwise wait a month on this file's task queue.
  for (const id of started) {
    await srv?.deps.temporal.workflow.getHandle(subscriptionWorkflowId(id)).terminate('test finished').catch(() => {});
  }
  await srv?.close();
});

/** Buys a monthly product through a real checkout; answers the subscription once the workflow made it. */
async function subscribe(s: Seller, amount = 1900, settings?: Record<string, unknown>, discountId?: string) {
  if (settings) await srv.deps.orm.em.fork().nativeUpdate(Organization, { id: s.organization.id }, { subscriptionSettings: settings });
  const product = await createProduct(srv.url, s.token, { name: `Plan ${amount}`, recurring_interval: 'month', prices: fixed(amount) });
  const checkout = await s.polar.checkouts.create({ productId: product.id, ...(discountId ? { discountId } : {}) });
  const email = `sub-${randomUUID().slice(0, 8)}@example.com`;
  const confirmed = await pub.checkouts.clientConfirm({
    clientSecret: checkout.clientSecret,
    checkoutConfirmStripe: { customerEmail: email, customerName: 'Sam', customerBillingAddress: { country: 'US' }, confirmationTokenId: 'tok_visa' },
  });
  expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
  const page = await s.polar.subscriptions.list({ organizationId: s.organization.id, customerId: confirmed.customerId! });
  const sub = page.result.items[0]!;
  started.push(sub.id);
  return { sub, product, customerId: confirmed.customerId!, email };
}

async function eventTypes(orgId: string, subscriptionId: string) {
  const rows = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: orgId }, { orderBy: { createdAt: 'asc' } });
  return rows.filter((r) => (r.data as { id?: string }).id === subscriptionId).map((r) => r.type);
}

describe('seller changes through the SDK', () => {
  it('cancels at period end, refuses a second cancel, uncancels, and answers 400 when nothing is pending', async () => {
    const { sub } = await subscribe(a);
    // SDK 0.29.3 fills in `revoke: true` unless told `null`; with both set the API answers 422 (below).
    const canceled = await a.polar.subscriptions.update({
      id: sub.id,
      subscriptionUpdate: { cancelAtPeriodEnd: true, revoke: null, customerCancellationReason: 'too_expensive', customerCancellationComment: 'Later' },
    });
    expect(canceled).toMatchObject({ id: sub.id, status: 'active', cancelAtPeriodEnd: true, customerCancellationReason: 'too_expensive' });
    expect(canceled.endsAt?.toISOString()).toBe(sub.currentPeriodEnd?.toISOString());
    expect(canceled.canceledAt).not.toBeNull();

    await expect(
      a.polar.subscriptions.update({ id: sub.id, subscriptionUpdate: { cancelAtPeriodEnd: true, revoke: null } }),
    ).rejects.toBeInstanceOf(AlreadyCanceledSubscription);

    const back = await a.polar.subscriptions.update({ id: sub.id, subscriptionUpdate: { cancelAtPeriodEnd: false, revoke: null } });
    expect(back).toMatchObject({ cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null });
    const again = await call(srv.url, a.token, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: false });
    expect(again.status).toBe(400);
    expect(again.body.error).toBe('BadRequest');

    const both = await call(srv.url, a.token, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: true, revoke: true });
    expect(both.status).toBe(422);
    expect(both.body.detail[0].loc).toEqual(['body', 'revoke']);

    expect(await eventTypes(a.organization.id, sub.id)).toEqual(
      expect.arrayContaining(['subscription.canceled', 'subscription.uncanceled', 'subscription.updated']),
    );
  });

  it('revokes at once; a revoked subscription cannot be revoked (403) or uncanceled (410)', async () => {
    const { sub, customerId } = await subscribe(a);
    const revoked = await a.polar.subscriptions.revoke({ id: sub.id });
    expect(revoked).toMatchObject({ id: sub.id, status: 'canceled', cancelAtPeriodEnd: false });
    expect(revoked.endedAt).not.toBeNull();
    await expect(a.polar.subscriptions.revoke({ id: sub.id })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
    const uncancel = await call(srv.url, a.token, 'PATCH', `/v1/subscriptions/${sub.id}`, { cancel_at_period_end: false });
    expect(uncancel.status).toBe(410);
    expect(uncancel.body.error).toBe('ResourceUnavailable');
    const state = await a.polar.customers.getState({ id: customerId });
    expect(state.activeSubscriptions).toEqual([]);
    expect(await eventTypes(a.organization.id, sub.id)).toEqual(expect.arrayContaining(['subscription.revoked', 'subscription.canceled']));
  });

  it('changes product with an invoice for the prorated difference, and refuses products it cannot move to (422)', async () => {
    const { sub, customerId } = await subscribe(a, 1900);
    const pro = await createProduct(srv.url, a.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(4900) });
    const oneTime = await createProduct(srv.url, a.token, { name: 'Book', prices: fixed(900) });
    const foreign = await createProduct(srv.url, b.token, { name: 'Theirs', recurring_interval: 'month', prices: fixed(900) });

    for (const productId of [oneTime.id, foreign.id]) {
      const err = await a.polar.subscriptions.update({ id: sub.id, subscriptionUpdate: { productId } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HTTPValidationError);
      const raw = await call(srv.url, a.token, 'PATCH', `/v1/subscriptions/${sub.id}`, { product_id: productId });
      expect(raw.status).toBe(422);
      expect(raw.body.detail[0].loc).toEqual(['body', 'product_id']);
    }

    const changed = await a.polar.subscriptions.update({ id: sub.id, subscriptionUpdate: { productId: pro.id, prorationBehavior: 'invoice' } });
    expect(changed).toMatchObject({ productId: pro.id, priceId: pro.prices[0]!.id, amount: 4900, status: 'active' });
    const orders = await a.polar.orders.list({ organizationId: a.organization.id, customerId });
    const update = orders.result.items.find((o) => o.billingReason === 'subscription_update');
    // Seconds after the start nearly the whole period remains: the full difference, 4900 − 1900.
    expect(update).toMatchObject({ amount: 3000, status: 'paid', subscriptionId: sub.id });
  });

  it('answers 404 for another organization’s subscription', async () => {
    const { sub } = await subscribe(a);
    await expect(
      b.polar.subscriptions.update({ id: sub.id, subscriptionUpdate: { cancelAtPeriodEnd: true, revoke: null } }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(b.polar.subscriptions.revoke({ id: sub.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await a.polar.subscriptions.get({ id: sub.id })).cancelAtPeriodEnd).toBe(false);
  });
});

describe('customer portal subscriptions', () => {
  it('lists and reads only the customer’s own, cancels with DELETE and uncancels with PATCH', async () => {
    const mine = await subscribe(a);
    const theirs = await subscribe(a);
    const session = await a.polar.customerSessions.create({ customerId: mine.customerId });
    const me = new Polar({ accessToken: session.token, serverURL: srv.url });
    const security = { customerSession: session.token };

    const page = await me.customerPortal.subscriptions.list(security, {});
    expect(page.result.items.map((s) => s.id)).toEqual([mine.sub.id]);
    expect(page.result.items[0]!.product.organization.id).toBe(a.organization.id);
    expect((await me.customerPortal.subscriptions.list(security, { active: false })).result.items).toEqual([]);
    expect((await me.customerPortal.subscriptions.list(security, { query: 'plan', productId: mine.product.id })).result.items).toHaveLength(1);
    expect((await me.customerPortal.subscriptions.list(security, { query: 'nothing like it' })).result.items).toEqual([]);
    expect((await me.customerPortal.subscriptions.list(security, { productId: theirs.product.id })).result.items).toEqual([]);
    expect((await me.customerPortal.subscriptions.get(security, { id: mine.sub.id })).id).toBe(mine.sub.id);
    await expect(me.customerPortal.subscriptions.get(security, { id: theirs.sub.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(me.customerPortal.subscriptions.cancel(security, { id: theirs.sub.id })).rejects.toBeInstanceOf(ResourceNotFound);

    const canceled = await me.customerPortal.subscriptions.cancel(security, { id: mine.sub.id });
    expect(canceled).toMatchObject({ cancelAtPeriodEnd: true, status: 'active' });
    await expect(me.customerPortal.subscriptions.cancel(security, { id: mine.sub.id })).rejects.toBeInstanceOf(AlreadyCanceledSubscription);
    const back = await me.customerPortal.subscriptions.update(security, {
      id: mine.sub.id,
      customerSubscriptionUpdate: { cancelAtPeriodEnd: false },
    });
    expect(back.cancelAtPeriodEnd).toBe(false);
    expect((await a.polar.subscriptions.get({ id: theirs.sub.id })).cancelAtPeriodEnd).toBe(false);
  });

  it('lets the customer change product only when the organization allows it', async () => {
    const c = await sellerWithSdk(srv, SCOPES);
    const { sub, customerId } = await subscribe(c, 1000, { allow_customer_updates: false, proration_behavior: 'prorate' });
    const pro = await createProduct(srv.url, c.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(3000) });
    const session = await c.polar.customerSessions.create({ customerId });
    const res = await call(srv.url, session.token, 'PATCH', `/v1/customer-portal/subscriptions/${sub.id}`, { product_id: pro.id });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');

    await srv.deps.orm.em.fork().nativeUpdate(Organization, { id: c.organization.id }, { subscriptionSettings: { proration_behavior: 'prorate' } });
    const me = new Polar({ accessToken: session.token, serverURL: srv.url });
    const changed = await me.customerPortal.subscriptions.update(
      { customerSession: session.token },
      { id: sub.id, customerSubscriptionUpdate: { productId: pro.id } },
    );
    expect(changed).toMatchObject({ productId: pro.id, amount: 3000 });
    // The organization prorates: nothing billed now, the difference waits for the next cycle.
    const orders = await c.polar.orders.list({ organizationId: c.organization.id, customerId });
    expect(orders.result.items.map((o) => o.billingReason)).toEqual(['subscription_create']);
  });
});

describe('the seller list', () => {
  it('filters by product, discount and active, and sorts by every key the SDK sends', async () => {
    const c = await sellerWithSdk(srv, SCOPES);
    const discount = async (name: string) => {
      const res = await call(srv.url, c.token, 'POST', '/v1/discounts/', { name, type: 'percentage', basis_points: 1000, duration: 'forever' });
      expect(res.status).toBe(201);
      return res.body.id as string;
    };
    const alpha = await discount('Alpha');
    const beta = await discount('Beta');
    const plain = await subscribe(c, 1000);
    const withBeta = await subscribe(c, 3000, undefined, beta);
    const withAlpha = await subscribe(c, 2000, undefined, alpha);
    await c.polar.subscriptions.revoke({ id: plain.sub.id });

    const ids = async (q: string) => {
      const res = await call(srv.url, c.token, 'GET', `/v1/subscriptions/?organization_id=${c.organization.id}&${q}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.items as { id: string }[]).map((i) => i.id);
    };
    const [p, b, a] = [plain.sub.id, withBeta.sub.id, withAlpha.sub.id];
    expect(await ids('sorting=amount')).toEqual([p, a, b]);
    expect(await ids('sorting=-amount')).toEqual([b, a, p]);
    expect(await ids('sorting=product')).toEqual([p, a, b]);
    expect(await ids('sorting=-product')).toEqual([b, a, p]);
    expect((await ids('sorting=discount')).slice(0, 2)).toEqual([a, b]);
    expect((await ids('sorting=-discount')).slice(-2)).toEqual([b, a]);
    const byEmail = [plain, withBeta, withAlpha].sort((x, y) => x.email.localeCompare(y.email)).map((x) => x.sub.id);
    expect(await ids('sorting=customer')).toEqual(byEmail);
    expect(await ids('sorting=-customer')).toEqual([...byEmail].reverse());
    // By status name: active before canceled.
    expect((await ids('sorting=status'))[2]).toBe(p);
    expect((await ids('sorting=-status'))[0]).toBe(p);
    expect(await ids('sorting=-started_at')).toEqual([a, b, p]);
    expect(await ids('sorting=started_at')).toEqual([p, b, a]);

    expect(await ids(`discount_id=${alpha}`)).toEqual([a]);
    expect(await ids(`product_id=${withBeta.product.id}`)).toEqual([b]);
    expect(await ids('active=false')).toEqual([p]);
    expect((await ids('active=true')).sort()).toEqual([a, b].sort());
    const bad = await call(srv.url, c.token, 'GET', '/v1/subscriptions/?sorting=price');
    expect(bad.status).toBe(422);
  }, 60_000);
});

describe('export', () => {
  it('answers the organization’s subscriptions as CSV, and only its own', async () => {
    const { sub, email } = await subscribe(a);
    const res = await fetch(`${srv.url}/v1/subscriptions/export?organization_id=${a.organization.id}`, {
      headers: { authorization: `Bearer ${a.token}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const lines = (await res.text()).trim().split('\r\n');
    expect(lines[0]).toBe('id,email,name,created_at,status,active,product,amount,currency,interval,current_period_end,cancel_at_period_end,ended_at');
    const row = lines.find((l) => l.startsWith(sub.id))!.split(',');
    expect(row.slice(0, 3)).toEqual([sub.id, email, 'Sam']);
    expect(row.slice(4, 10)).toEqual(['active', 'true', 'Plan 1900', '1900', 'usd', 'month']);

    const other = await fetch(`${srv.url}/v1/subscriptions/export`, { headers: { authorization: `Bearer ${b.token}` } });
    expect(other.status).toBe(200);
    expect(await other.text()).not.toContain(sub.id);
    const anonymous = await fetch(`${srv.url}/v1/subscriptions/export`);
    expect(anonymous.status).toBe(401);
  });
});

describe('the lifecycle workflow', () => {
  it('is started for a subscription bought at checkout', async () => {
    const { sub } = await subscribe(a);
    const description = await until(async () => {
      try {
        return await srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(sub.id)).describe();
      } catch {
        return null;
      }
    });
    expect(description.status.name).toBe('RUNNING');
    expect(description.type).toBe('subscriptionWorkflow');
  });
});
