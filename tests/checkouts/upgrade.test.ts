/**
 * Upgrade checkouts (`subscription_id` on create, as Polar's): a customer on a free monthly plan buys
 * the paid plan through a checkout naming their subscription. The same subscription moves to the paid
 * product and price with a new period and a `subscription_update` order; the free plan's benefit is
 * revoked and the paid plan's granted; the customer still has one subscription. Which subscriptions a
 * checkout may name is checked at creation (422 on `body.subscription_id`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { BenefitGrant } from '../../api/src/modules/benefits/grants.ts';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { createCheckoutConfirmActivities } from '../../workers/src/activities/checkout-confirm.activities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github-server.ts';
import { createProduct } from './helpers.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, buyer, call, confirmRaw, fulfilled, newCheckout, until, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let github: FakeGitHub;
let a: Seller;
let b: Seller;
const subscriptions: string[] = [];

beforeAll(async () => {
  github = await startFakeGitHub();
  srv = await startTestServer({ env: { GITHUB_API_URL: github.url, GITHUB_TOKEN: github.token } });
  a = await sellerWithSdk(srv, [...CONFIRM_SCOPES, 'subscriptions:write', 'customer_sessions:write']);
  b = await sellerWithSdk(srv, CONFIRM_SCOPES);
});
afterAll(async () => {
  for (const id of subscriptions) {
    await srv?.deps.temporal.workflow.getHandle(subscriptionWorkflowId(id)).terminate('test finished').catch(() => {});
  }
  await srv?.close();
  await github?.close();
});

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

/** A monthly product at `amount` (minor units), or free with null. */
function monthly(s: Seller, name: string, amount: number | null) {
  const price = amount === null ? { amount_type: 'free' } : { amount_type: 'fixed', price_amount: amount, price_currency: 'usd' };
  return createProduct(srv.url, s.token, { name, recurring_interval: 'month', prices: [price] });
}

async function benefit(s: Seller, body: Record<string, unknown>): Promise<string> {
  const res = await call(srv.url, s.token, 'POST', '/v1/benefits/', body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.id;
}

async function withBenefits(s: Seller, product: { id: string }, benefits: string[]) {
  expect((await call(srv.url, s.token, 'POST', `/v1/products/${product.id}/benefits`, { benefits })).status).toBe(200);
}

/** A subscription bought through a checkout (free: just an email; paid: tok_visa). */
async function subscribe(s: Seller, productId: string, paid: boolean) {
  const c = await newCheckout(srv, s, productId);
  const res = await confirmRaw(srv, c.client_secret, paid ? { ...buyer(email('paid')), confirmation_token_id: 'tok_visa' } : { customer_email: email('free') });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(await fulfilled(srv, s, c.id)).toBe('succeeded');
  const list = await call(srv.url, s.token, 'GET', `/v1/subscriptions/?customer_id=${res.body.customer_id}`);
  const sub = list.body.items[0];
  subscriptions.push(sub.id);
  return { sub, customerId: res.body.customer_id as string };
}

async function grantOf(s: Seller, benefitId: string, customerId: string) {
  const res = await call(srv.url, s.token, 'GET', `/v1/benefits/${benefitId}/grants?customer_id=${customerId}`);
  return res.body.items[0] as { is_granted: boolean; is_revoked: boolean } | undefined;
}

describe('an upgrade checkout', () => {
  it('moves the free subscription to the paid plan: new period, one subscription, benefits swapped', async () => {
    const freeNote = await benefit(a, { type: 'custom', description: 'Community', properties: { note: 'Forum access' } });
    const license = await benefit(a, { type: 'license_keys', description: 'Pro license', properties: { prefix: 'pro' } });
    const free = await monthly(a, 'Free', null);
    const pro = await monthly(a, 'Pro', 2900);
    await withBenefits(a, free, [freeNote]);
    await withBenefits(a, pro, [license]);
    const { sub, customerId } = await subscribe(a, free.id, false);
    expect(sub).toMatchObject({ product_id: free.id, amount: 0, status: 'active' });
    expect((await grantOf(a, freeNote, customerId))?.is_granted).toBe(true);

    const checkout = await newCheckout(srv, a, pro.id, { subscription_id: sub.id, metadata: { plan: 'pro' } });
    expect(checkout).toMatchObject({ customer_id: customerId, subscription_id: sub.id });
    // The buyer is the subscription's customer whatever email they type.
    const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('typed')), confirmation_token_id: 'tok_visa' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.customer_id).toBe(customerId);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');

    const after = await call(srv.url, a.token, 'GET', `/v1/subscriptions/${sub.id}`);
    expect(after.body).toMatchObject({
      id: sub.id,
      product_id: pro.id,
      price_id: pro.prices[0]!.id,
      amount: 2900,
      status: 'active',
      cancel_at_period_end: false,
      metadata: { plan: 'pro' },
    });
    expect(Date.parse(after.body.current_period_start)).toBeGreaterThan(Date.parse(sub.current_period_start));
    const all = await call(srv.url, a.token, 'GET', `/v1/subscriptions/?customer_id=${customerId}`);
    expect(all.body.items.map((s: { id: string }) => s.id)).toEqual([sub.id]);

    const orders = await call(srv.url, a.token, 'GET', `/v1/orders/?checkout_id=${checkout.id}`);
    expect(orders.body.items).toHaveLength(1);
    expect(orders.body.items[0]).toMatchObject({ billing_reason: 'subscription_update', subscription_id: sub.id, status: 'paid', total_amount: 2900 });

    expect((await grantOf(a, license, customerId))?.is_granted).toBe(true);
    expect((await grantOf(a, freeNote, customerId))?.is_revoked).toBe(true);
    const state = await call(srv.url, a.token, 'GET', `/v1/customers/${customerId}/state`);
    expect(state.body.active_subscriptions.map((s: { id: string; product_id: string }) => [s.id, s.product_id])).toEqual([[sub.id, pro.id]]);
    expect(state.body.granted_benefits.map((g: { benefit_id: string }) => g.benefit_id)).toEqual([license]);

    // Its lifecycle carries on, now for the paid plan.
    const described = await until(async () => {
      try {
        return await srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(sub.id)).describe();
      } catch {
        return null;
      }
    });
    expect(described.status.name).toBe('RUNNING');
  });

  it('revokes the old plan’s GitHub access through its workflow, also when a retry has to ask again', async () => {
    github.addRepository('acme', 'community');
    const octo = github.addUser(`octo-${randomUUID().slice(0, 6)}`);
    const benefitId = await benefit(a, {
      type: 'github_repository',
      description: 'Community repo',
      properties: { repository_owner: 'acme', repository_name: 'community', permission: 'pull' },
    });
    const free = await monthly(a, 'Free tier', null);
    const pro = await monthly(a, 'Pro tier', 1900);
    await withBenefits(a, free, [benefitId]);
    const { sub, customerId } = await subscribe(a, free.id, false);

    // The customer picks their GitHub account in the portal (a session the seller made for them);
    // they are invited and accept.
    const session = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', { customer_id: customerId });
    expect(session.status, JSON.stringify(session.body)).toBe(201);
    const pending = await until(async () => {
      const res = await call(srv.url, a.token, 'GET', `/v1/benefits/${benefitId}/grants?customer_id=${customerId}`);
      return res.body.items[0] as { id: string } | undefined;
    });
    const picked = await call(srv.url, session.body.token, 'PATCH', `/v1/customer-portal/benefit-grants/${pending.id}`, {
      benefit_type: 'github_repository',
      properties: { account_id: octo.login },
    });
    expect(picked.status, JSON.stringify(picked.body)).toBe(200);
    await until(async () => (await grantOf(a, benefitId, customerId))?.is_granted === true);
    expect(github.invitations('acme', 'community')).toEqual([expect.objectContaining({ login: octo.login, permission: 'pull' })]);
    github.accept('acme', 'community', octo.login);
    expect(github.collaborators('acme', 'community')).toEqual([octo.login]);
    const grantedRow = await srv.deps.orm.em.fork().findOneOrFail(BenefitGrant, { benefit: benefitId, customer: customerId });
    const granted = { grantedAt: grantedRow.grantedAt, properties: grantedRow.properties };

    // The upgrade to a plan without the benefit removes the collaborator on GitHub.
    const removals = () =>
      github.requests.filter((r) => r.method === 'DELETE' && r.path === `/repos/acme/community/collaborators/${octo.login}`).length;
    const checkout = await newCheckout(srv, a, pro.id, { subscription_id: sub.id });
    const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('up')), confirmation_token_id: 'tok_visa' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    await until(async () => ((await grantOf(a, benefitId, customerId))?.is_revoked ? true : null));
    expect(github.collaborators('acme', 'community')).not.toContain(octo.login);
    expect(removals()).toBe(1);

    // As if the worker had died after the fulfilment committed, before queueing that revocation: the
    // checkout still confirmed, the grant still granted, the collaborator still on GitHub. The retry of
    // the fulfilment step finds the order and answers the revocation, which the next step requests.
    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Checkout, { id: checkout.id }, { status: 'confirmed' });
    await em.nativeUpdate(BenefitGrant, { benefit: benefitId, customer: customerId }, { revokedAt: null, ...granted });
    github.accept('acme', 'community', octo.login);
    expect((await grantOf(a, benefitId, customerId))?.is_granted).toBe(true);
    const steps = createCheckoutConfirmActivities(srv.deps);
    const retry = await steps.fulfilStep(checkout.id);
    expect(retry).toMatchObject({ subscriptionId: sub.id, succeeded: false, externalBenefitIds: [], externalRevokeBenefitIds: [benefitId] });
    await steps.requestGrantsStep(checkout.id, retry!);
    await until(async () => ((await grantOf(a, benefitId, customerId))?.is_revoked ? true : null));
    expect(github.collaborators('acme', 'community')).not.toContain(octo.login);
    expect(removals()).toBe(2);
  });

  it('names only a live free subscription of the organization, for recurring products and its own customer', async () => {
    const free = await monthly(a, 'Starter', null);
    const paid = await monthly(a, 'Team', 5000);
    const once = await createProduct(srv.url, a.token, { name: 'Add-on', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] });
    const { sub: freeSub } = await subscribe(a, free.id, false);
    const { sub: paidSub } = await subscribe(a, paid.id, true);
    const other = await call(srv.url, a.token, 'POST', '/v1/customers/', { email: email('other') });

    const refused = async (s: Seller, body: Record<string, unknown>) => {
      const res = await call(srv.url, s.token, 'POST', '/v1/checkouts/', body);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['body', 'subscription_id']);
      return res.body.detail[0].msg as string;
    };
    expect(await refused(a, { product_id: paid.id, subscription_id: randomUUID() })).toMatch(/does not exist/);
    expect(await refused(b, { product_id: (await monthly(b, 'B plan', 100)).id, subscription_id: freeSub.id })).toMatch(/does not exist/);
    expect(await refused(a, { product_id: paid.id, subscription_id: paidSub.id })).toMatch(/free price/);
    expect(await refused(a, { product_id: once.id, subscription_id: freeSub.id })).toMatch(/recurring/);
    expect(await refused(a, { product_id: paid.id, subscription_id: freeSub.id, customer_id: other.body.id })).toMatch(/another customer/);

    const revoked = await call(srv.url, a.token, 'DELETE', `/v1/subscriptions/${freeSub.id}`);
    expect(revoked.status, JSON.stringify(revoked.body)).toBe(200);
    expect(await refused(a, { product_id: paid.id, subscription_id: freeSub.id })).toMatch(/not active/);
  }, 60_000);
});
