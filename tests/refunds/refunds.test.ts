/**
 * Refunds through `@polar-sh/sdk` 0.29.3 on orders from real confirmed checkouts (sandbox processor):
 * partial and full refunds with their tax share, the order's refunded amounts and status, the
 * processor's refunded amount, webhooks in the outbox, listing with filters and sorting, the
 * documented errors, tenant isolation, many concurrent refunds of one order, and benefit revocation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RefundAmountTooHigh } from '@polar-sh/sdk/models/errors/refundamounttoohigh.js';
import { RefundedAlready } from '@polar-sh/sdk/models/errors/refundedalready.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { BenefitGrant } from '../../api/src/modules/benefits/grants.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { createSandboxProcessor } from '../../api/src/modules/payments/sandbox.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buy, call, fixed, orderWithStatus, refundSeller, until, type Seller } from './helpers.ts';

let srv: TestServer;
let a: Seller;
let b: Seller;

beforeAll(async () => {
  // Concurrent refunds each hold a connection while they wait on the order's row lock.
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '24' } });
  a = await refundSeller(srv);
  b = await refundSeller(srv);
  // Seller A charges 7.25 % tax in the US: refunds carry their share of it.
  const tax = await call(srv.url, a.token, 'POST', '/v1/tax-rates/', { country: 'US', basis_points: 725 });
  expect(tax.status).toBe(201);
});
afterAll(async () => {
  await srv?.close();
});

/** The sandbox charge id of an order (the order read model does not expose it). */
async function chargeOf(orderId: string): Promise<string> {
  const o = await srv.deps.orm.em.fork().findOneOrFail(Order, { id: orderId });
  return o.processorChargeId!;
}

async function sandboxCharge(chargeId: string) {
  return srv.deps.orm.em.fork().findOneOrFail(SandboxCharge, { id: chargeId });
}

async function eventsOf(orgId: string, type: string) {
  return srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: orgId, type: type as never }, { orderBy: { createdAt: 'asc' } });
}

describe('refunding a one-time order', () => {
  let order: Record<string, any>;
  let grantOrderId: string;

  beforeAll(async () => {
    const benefit = await call(srv.url, a.token, 'POST', '/v1/benefits/', { type: 'license_keys', description: 'License', properties: {} });
    expect(benefit.status).toBe(201);
    const product = await createProduct(srv.url, a.token, { name: 'Desktop app', prices: fixed(2999) });
    await call(srv.url, a.token, 'POST', `/v1/products/${product.id}/benefits`, { benefits: [benefit.body.id] });
    order = await buy(srv, a, product.id);
    grantOrderId = order.id;
  });

  it('refunds part, then the rest, with the tax split; the order and the processor follow', async () => {
    // 2999 + round(2999 × 7.25 %) = 2999 + 217 tax.
    expect(order).toMatchObject({ net_amount: 2999, tax_amount: 217, total_amount: 3216, refunded_amount: 0 });

    const created = await call(srv.url, a.token, 'POST', '/v1/refunds/', {
      order_id: order.id,
      reason: 'customer_request',
      amount: 1000,
      comment: 'Asked nicely',
      metadata: { ticket: 'T-1', priority: 2, vip: true },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      status: 'pending',
      reason: 'customer_request',
      amount: 1000,
      tax_amount: 72, // round(1000 × 217 / 2999)
      currency: 'usd',
      organization_id: a.organization.id,
      order_id: order.id,
      subscription_id: null,
      customer_id: order.customer_id,
      revoke_benefits: false,
      metadata: { ticket: 'T-1', priority: 2, vip: true },
    });

    const partial = await orderWithStatus(srv, a, order.id, 'partially_refunded');
    expect(partial).toMatchObject({ refunded_amount: 1000, refunded_tax_amount: 72, paid: true });
    expect((await sandboxCharge(await chargeOf(order.id))).refundedAmount).toBe(1072);

    // The rest through the SDK: the whole remainder refunds all the remaining tax.
    await a.polar.refunds.create({ orderId: order.id, reason: 'satisfaction_guarantee', amount: 1999 });
    const full = await orderWithStatus(srv, a, order.id, 'refunded');
    expect(full).toMatchObject({ refunded_amount: 2999, refunded_tax_amount: 217 });
    expect((await sandboxCharge(await chargeOf(order.id))).refundedAmount).toBe(3216);

    const list = await a.polar.refunds.list({ orderId: order.id, sorting: ['amount'] });
    expect(list.result.items.map((r) => [r.amount, r.taxAmount, r.status, r.reason])).toEqual([
      [1000, 72, 'succeeded', 'customer_request'],
      [1999, 145, 'succeeded', 'satisfaction_guarantee'],
    ]);
    expect(list.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    expect(list.result.items[0]!.createdAt).toBeInstanceOf(Date);

    // Webhooks: refund.created and refund.updated per refund, order.refunded per settled refund.
    const forOrder = (events: OutboxEvent[]) => events.filter((e) => (e.data as { order_id?: string; id?: string }).order_id === order.id || (e.data as { id?: string }).id === order.id);
    expect(forOrder(await eventsOf(a.organization.id, 'refund.created'))).toHaveLength(2);
    const updated = forOrder(await eventsOf(a.organization.id, 'refund.updated'));
    expect(updated.map((e) => (e.data as { status: string }).status)).toEqual(['succeeded', 'succeeded']);
    const refunded = forOrder(await eventsOf(a.organization.id, 'order.refunded'));
    expect(refunded.map((e) => (e.data as { status: string }).status)).toEqual(['partially_refunded', 'refunded']);
  });

  it('refuses more once fully refunded (403 RefundedAlready) and leaves the benefits granted without revoke_benefits', async () => {
    await expect(a.polar.refunds.create({ orderId: order.id, reason: 'other', amount: 1 })).rejects.toBeInstanceOf(RefundedAlready);
    const raw = await call(srv.url, a.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 1 });
    expect(raw.status).toBe(403);
    expect(raw.body.error).toBe('RefundedAlready');
    const grants = await srv.deps.orm.em.fork().find(BenefitGrant, { orderId: grantOrderId });
    expect(grants).toHaveLength(1);
    expect(grants[0]!.grantedAt).not.toBeNull();
    expect(grants[0]!.revokedAt).toBeNull();
  });
});


describe('errors and tenant isolation', () => {
  let order: Record<string, any>;
  let subscriptionOrder: Record<string, any>;

  beforeAll(async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Course', prices: fixed(5000) });
    order = await buy(srv, a, product.id);
    const monthly = await createProduct(srv.url, a.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(1900) });
    subscriptionOrder = await buy(srv, a, monthly.id);
  });

  it('an amount above what remains is 400 RefundAmountTooHigh', async () => {
    await expect(a.polar.refunds.create({ orderId: order.id, reason: 'duplicate', amount: 5001 })).rejects.toBeInstanceOf(RefundAmountTooHigh);
    const raw = await call(srv.url, a.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'duplicate', amount: 5001 });
    expect(raw.status).toBe(400);
    expect(raw.body).toMatchObject({ error: 'RefundAmountTooHigh' });
    expect(typeof raw.body.detail).toBe('string');
  });

  it('validates the body (422)', async () => {
    await expect(a.polar.refunds.create({ orderId: order.id, reason: 'duplicate', amount: 0 })).rejects.toBeInstanceOf(HTTPValidationError);
    const cases: [Record<string, unknown>, string][] = [
      [{ order_id: order.id, reason: 'changed_my_mind', amount: 100 }, 'reason'],
      [{ order_id: order.id, reason: 'other', amount: -5 }, 'amount'],
      [{ order_id: order.id, reason: 'other', amount: 10.5 }, 'amount'],
      [{ order_id: order.id, reason: 'other' }, 'amount'],
      [{ order_id: 'nope', reason: 'other', amount: 100 }, 'order_id'],
      [{ order_id: order.id, reason: 'other', amount: 100, metadata: { ratio: 0.5 } }, 'metadata'],
    ];
    for (const [body, field] of cases) {
      const res = await call(srv.url, a.token, 'POST', '/v1/refunds/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.detail[0].loc.slice(0, 2)).toEqual(['body', field]);
    }
    const list = await call(srv.url, a.token, 'GET', '/v1/refunds/?sorting=reason');
    expect(list.status).toBe(422);
    expect(list.body.detail[0].loc).toEqual(['query', 'sorting']);
  });

  it("another organization's order is 422 on body.order_id, and its refunds are never listed", async () => {
    const res = await call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 100 });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'order_id']);
    await expect(b.polar.refunds.create({ orderId: order.id, reason: 'other', amount: 100 })).rejects.toBeInstanceOf(HTTPValidationError);
    const unknown = await call(srv.url, a.token, 'POST', '/v1/refunds/', { order_id: crypto.randomUUID(), reason: 'other', amount: 100 });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail[0].loc).toEqual(['body', 'order_id']);

    await a.polar.refunds.create({ orderId: order.id, reason: 'other', amount: 100 });
    const mine = await a.polar.refunds.list({ orderId: order.id });
    expect(mine.result.items).toHaveLength(1);
    const theirs = await b.polar.refunds.list({ orderId: order.id });
    expect(theirs.result.items).toEqual([]);
    const theirsAll = await b.polar.refunds.list({});
    expect(theirsAll.result.pagination.totalCount).toBe(0);
    const byOrg = await b.polar.refunds.list({ organizationId: a.organization.id });
    expect(byOrg.result.items).toEqual([]);
  });

  it('revoke_benefits on a subscription order is 400; a plain refund of it is fine', async () => {
    expect(subscriptionOrder.subscription_id).not.toBeNull();
    const res = await call(srv.url, a.token, 'POST', '/v1/refunds/', {
      order_id: subscriptionOrder.id, reason: 'other', amount: 100, revoke_benefits: true,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('RevokeSubscriptionBenefitsProhibited');
    const ok = await call(srv.url, a.token, 'POST', '/v1/refunds/', { order_id: subscriptionOrder.id, reason: 'other', amount: 900 });
    expect(ok.status).toBe(201);
    expect(ok.body.subscription_id).toBe(subscriptionOrder.subscription_id);
    const settled = await orderWithStatus(srv, a, subscriptionOrder.id, 'partially_refunded');
    expect(settled.refunded_amount).toBe(900);
    // The subscription keeps running: a refund alone does not cancel it.
    const sub = await call(srv.url, a.token, 'GET', `/v1/subscriptions/${subscriptionOrder.subscription_id}`);
    expect(sub.body.status).toBe('active');
  });
});

describe('listing refunds', () => {
  it('lists with filters, sorting and pagination', async () => {
    // A seller of its own (no tax), so the list holds exactly the refunds made here.
    const c = await refundSeller(srv);
    const once = await createProduct(srv.url, c.token, { name: 'Ebook', prices: fixed(3000) });
    const monthly = await createProduct(srv.url, c.token, { name: 'Club', recurring_interval: 'month', prices: fixed(1900) });
    const order = await buy(srv, c, once.id);
    const subscriptionOrder = await buy(srv, c, monthly.id);
    const refused = await buy(srv, c, once.id);
    const refund = async (orderId: string, amount: number) => {
      const res = await call(srv.url, c.token, 'POST', '/v1/refunds/', { order_id: orderId, reason: 'other', amount });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    await refund(order.id, 1999);
    await refund(order.id, 100);
    await refund(subscriptionOrder.id, 900);
    // One refund the processor refuses (most of the charge was given back outside the platform).
    await createSandboxProcessor(srv.deps.orm).refund({ chargeId: await chargeOf(refused.id), amount: 2600, idempotencyKey: `manual:${refused.id}` });
    const failedId = await refund(refused.id, 500);
    await orderWithStatus(srv, c, order.id, 'partially_refunded', 2099);
    await orderWithStatus(srv, c, subscriptionOrder.id, 'partially_refunded', 900);
    await until(async () => ((await c.polar.refunds.list({ id: failedId })).result.items[0]?.status === 'failed' ? true : null));

    const bySubscription = await c.polar.refunds.list({ subscriptionId: subscriptionOrder.subscription_id });
    expect(bySubscription.result.items.map((r) => r.amount)).toEqual([900]);
    const byCustomer = await c.polar.refunds.list({ customerId: order.customer_id, sorting: ['amount'] });
    expect(byCustomer.result.items.map((r) => [r.orderId, r.amount])).toEqual([[order.id, 100], [order.id, 1999]]);
    const all = await c.polar.refunds.list({ succeeded: true, sorting: ['-amount'], limit: 2 });
    expect(all.result.items.map((r) => r.amount)).toEqual([1999, 900]);
    expect(all.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    const page2 = await c.polar.refunds.list({ succeeded: true, sorting: ['-amount'], limit: 2, page: 2 });
    expect(page2.result.items.map((r) => r.amount)).toEqual([100]);
    const byId = await c.polar.refunds.list({ id: all.result.items[0]!.id });
    expect(byId.result.items.map((r) => r.id)).toEqual([all.result.items[0]!.id]);
    const notSucceeded = await c.polar.refunds.list({ succeeded: false });
    expect(notSucceeded.result.items.map((r) => [r.id, r.status, r.amount])).toEqual([[failedId, 'failed', 500]]);
  });
});

describe('concurrent refunds of one order', () => {
  it('never refund more than the net amount', async () => {
    // Seller B has no tax rate: net 1000, total 1000.
    const product = await createProduct(srv.url, b.token, { name: 'Sticker pack', prices: fixed(1000) });
    const order = await buy(srv, b, product.id);
    const attempts = 16;
    const results = await Promise.all(
      Array.from({ length: attempts }, () =>
        call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'duplicate', amount: 150 }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(6); // 6 × 150 = 900; a 7th would exceed 1000
    for (const r of results.filter((x) => x.status !== 201)) {
      expect(r.status).toBe(400);
      expect(r.body.error).toBe('RefundAmountTooHigh');
    }
    // What remains (100) can still be refunded; after that, nothing.
    expect((await call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 100 })).status).toBe(201);
    const again = await call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 1 });
    expect(again.status).toBe(403);
    expect(again.body.error).toBe('RefundedAlready');

    const settled = await orderWithStatus(srv, b, order.id, 'refunded', 1000);
    expect(settled.refunded_amount).toBe(1000);
    expect((await sandboxCharge(await chargeOf(order.id))).refundedAmount).toBe(1000);
    const list = await b.polar.refunds.list({ orderId: order.id, limit: 100 });
    expect(list.result.items).toHaveLength(7);
    expect(list.result.items.reduce((s, r) => s + r.amount, 0)).toBe(1000);
  });
});

describe('a refund the processor refuses', () => {
  it('fails, releases its reservation and leaves the order as it was', async () => {
    const product = await createProduct(srv.url, b.token, { name: 'Poster', prices: fixed(1000) });
    const order = await buy(srv, b, product.id);
    // 600 of the charge was given back at the processor directly, outside this platform.
    await createSandboxProcessor(srv.deps.orm).refund({ chargeId: await chargeOf(order.id), amount: 600, idempotencyKey: `manual:${order.id}` });

    const res = await call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 500 });
    expect(res.status).toBe(201);
    const failed = await until(async () => {
      const l = await b.polar.refunds.list({ id: res.body.id });
      return l.result.items[0]?.status === 'failed' ? l.result.items[0] : null;
    });
    expect(failed.amount).toBe(500);
    const unchanged = await call(srv.url, b.token, 'GET', `/v1/orders/${order.id}`);
    expect(unchanged.body).toMatchObject({ status: 'paid', refunded_amount: 0, refunded_tax_amount: 0 });
    const updates = (await eventsOf(b.organization.id, 'refund.updated')).filter((e) => (e.data as { id: string }).id === res.body.id);
    expect(updates.map((e) => (e.data as { status: string }).status)).toEqual(['failed']);
    expect((await b.polar.refunds.list({ orderId: order.id, succeeded: false })).result.items).toHaveLength(1);

    // The failed refund holds nothing back: 400 (what the processor still has) goes through.
    expect((await call(srv.url, b.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 400 })).status).toBe(201);
    const settled = await orderWithStatus(srv, b, order.id, 'partially_refunded', 400);
    expect(settled.refunded_amount).toBe(400);
  });
});

describe('revoking benefits on refund', () => {
  it('revokes the license key and the custom benefit of a one-time order', async () => {
    const license = await call(srv.url, a.token, 'POST', '/v1/benefits/', { type: 'license_keys', description: 'Key', properties: { prefix: 'app' } });
    const custom = await call(srv.url, a.token, 'POST', '/v1/benefits/', { type: 'custom', description: 'Support', properties: { note: 'Mail us' } });
    expect([license.status, custom.status]).toEqual([201, 201]);
    const product = await createProduct(srv.url, a.token, { name: 'Plugin', prices: fixed(4000) });
    await call(srv.url, a.token, 'POST', `/v1/products/${product.id}/benefits`, { benefits: [license.body.id, custom.body.id] });
    const order = await buy(srv, a, product.id);
    const grantsOf = () => srv.deps.orm.em.fork().find(BenefitGrant, { orderId: order.id });
    await until(async () => {
      const g = await grantsOf();
      return g.length === 2 && g.every((x) => x.grantedAt) ? g : null;
    });
    const keysBefore = await call(srv.url, a.token, 'GET', `/v1/license-keys?organization_id=${a.organization.id}&benefit_id=${license.body.id}`);
    expect(keysBefore.body.items.map((k: { status: string }) => k.status)).toEqual(['granted']);

    await a.polar.refunds.create({ orderId: order.id, reason: 'fraudulent', amount: 4000, revokeBenefits: true });
    await orderWithStatus(srv, a, order.id, 'refunded');
    const revoked = await until(async () => {
      const g = await grantsOf();
      return g.length === 2 && g.every((x) => x.revokedAt && !x.grantedAt) ? g : null;
    });
    expect(revoked).toHaveLength(2);
    const keysAfter = await call(srv.url, a.token, 'GET', `/v1/license-keys?organization_id=${a.organization.id}&benefit_id=${license.body.id}`);
    expect(keysAfter.body.items.map((k: { status: string }) => k.status)).toEqual(['revoked']);
    const list = await a.polar.refunds.list({ orderId: order.id });
    expect(list.result.items[0]).toMatchObject({ revokeBenefits: true, reason: 'fraudulent', amount: 4000, taxAmount: 290 });
  });
});
