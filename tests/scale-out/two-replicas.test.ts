/**
 * Scale-out: two API servers and two workers on one database and one task queue, with purchases,
 * refunds, renewals and webhook fan-out running at the same time. Every effect happens exactly once:
 * one order and one charge per checkout, one refund per order when both replicas are asked at once,
 * one delivery per event and endpoint, one renewal per period when both replicas start the same
 * subscription's workflow.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { startTestServer, type TestServer } from '../harness.ts';
import { sellerWithSdk, createProduct } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, buyer, call, confirmRaw, newCheckout, until, type Seller } from '../confirm/helpers.ts';
import { receiver, type Receiver } from '../webhooks/receiver.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCustomer, SandboxPaymentMethod } from '../../api/src/modules/payments/sandbox-entities.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { subscriptionWorkflowId } from '../../workflows/src/ids.ts';

let a: TestServer;
let b: TestServer;
let s: Seller;
let rx: Receiver;
let secret = '';

const PURCHASES = 16;
const RENEWALS = 6;

beforeAll(async () => {
  const env = { TEMPORAL_TASK_QUEUE: `scale-out-${randomUUID()}` };
  a = await startTestServer({ env });
  b = await startTestServer({ env, databaseUrl: a.databaseUrl });
  s = await sellerWithSdk(a, [...CONFIRM_SCOPES, 'webhooks:read', 'webhooks:write', 'refunds:read', 'refunds:write']);
  rx = await receiver(() => secret);
  const endpoint = await call(a.url, s.token, 'POST', '/v1/webhooks/endpoints', {
    url: rx.url,
    events: ['order.created', 'refund.created', 'subscription.updated'],
  });
  expect(endpoint.status).toBe(201);
  secret = endpoint.body.secret;
}, 240_000);

afterAll(async () => {
  await rx?.close();
  await b?.close();
  await a?.close();
});

async function count(sql: string, params: unknown[]): Promise<number> {
  const rows = await a.deps.orm.em.fork().execute<{ n: string }[]>(sql, params);
  return Number(rows[0]!.n);
}

/** Subscriptions whose period ends in a few seconds, as if bought a month ago (a renewal is due). */
async function dueSubscriptions(n: number): Promise<string[]> {
  const em = a.deps.orm.em.fork();
  const product = em.create(Product, { organization: s.organization.id, name: 'Monthly', description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const price = em.create(ProductPrice, {
    product, amountType: 'fixed', priceCurrency: 'usd', priceAmount: 900,
    minimumAmount: null, maximumAmount: null, presetAmount: null, meter: null, unitAmount: null, capAmount: null, isArchived: false,
  });
  const startedAt = new Date(Date.now() - 30 * 86_400_000);
  const renewAt = new Date(Date.now() + 8_000);
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const tag = randomUUID().slice(0, 8);
    const email = `renew-${tag}@example.com`;
    const sc = em.create(SandboxCustomer, { id: `cus_scale${tag}`, email, name: null, idempotencyKey: `scale:${tag}` });
    const spm = em.create(SandboxPaymentMethod, {
      id: `pm_scale${tag}`, customerId: sc.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, outcome: 'succeed', idempotencyKey: null, detachedAt: null,
    });
    const customer = em.create(Customer, { organization: s.organization.id, email, name: null, metadata: {}, processorCustomerId: sc.id, billingAddress: null });
    const pm = em.create(PaymentMethod, {
      customer, processor: 'sandbox', processorId: spm.id, brand: 'visa', last4: '4242', expMonth: 12, expYear: 2030, wallet: null, isDefault: true, deletedAt: null,
    });
    const sub = em.create(Subscription, {
      organization: s.organization.id, customer, product, price, discount: null, checkout: null,
      amount: 900, currency: 'usd', recurringInterval: 'month', status: 'active',
      currentPeriodStart: startedAt, currentPeriodEnd: renewAt, cancelAtPeriodEnd: false, canceledAt: null,
      startedAt, endsAt: null, endedAt: null, customerCancellationReason: null, customerCancellationComment: null,
      paymentMethod: pm, metadata: {},
    });
    ids.push(sub.id);
  }
  await em.flush();
  return ids;
}

describe('two API replicas and two workers on one task queue', () => {
  it('make every purchase, refund, renewal and webhook delivery exactly once while all run at once', { timeout: 300_000 }, async () => {
    const product = await createProduct(a.url, s.token, { name: 'Scale-out', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
    const subscriptionIds = await dueSubscriptions(RENEWALS);
    const replicas = [a, b];

    // Renewals: both replicas start each subscription's workflow; the deterministic id admits one.
    const renewalStarts = subscriptionIds.flatMap((subscriptionId) =>
      replicas.map((r) =>
        r.deps.temporal.workflow
          .start('subscriptionWorkflow', { taskQueue: r.deps.cfg.TEMPORAL_TASK_QUEUE, workflowId: subscriptionWorkflowId(subscriptionId), args: [{ subscriptionId }] })
          .then(
            () => 'started' as const,
            (err: unknown) => {
              if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already' as const;
              throw err;
            },
          ),
      ),
    );

    // Purchases: each checkout is created on one replica and confirmed on both at once.
    const purchases = Array.from({ length: PURCHASES }, async (_, i) => {
      const c = await newCheckout(replicas[i % 2]!, s, product.id);
      const body = { ...buyer(`scale-${i}-${randomUUID().slice(0, 6)}@example.com`), confirmation_token_id: 'tok_visa' };
      const answers = await Promise.all([confirmRaw(a, c.client_secret, body), confirmRaw(b, c.client_secret, body)]);
      return { checkoutId: c.id, statuses: answers.map((r) => r.status).sort() };
    });

    const [starts, bought] = await Promise.all([Promise.all(renewalStarts), Promise.all(purchases)]);
    expect(starts.filter((x) => x === 'started')).toHaveLength(RENEWALS);
    // One confirm of each pair wins; the other is told the checkout is taken.
    for (const p of bought) expect(p.statuses.filter((st) => st === 200)).toHaveLength(1);

    // Every checkout gets exactly one paid order and one succeeded charge.
    const orders = await until(async () => {
      const page = await call(a.url, s.token, 'GET', `/v1/orders/?product_id=${product.id}&limit=100`);
      return page.body.items.length >= PURCHASES && page.body.items;
    }, 120_000);
    expect(orders).toHaveLength(PURCHASES);
    expect(new Set(orders.map((o: { checkout_id: string }) => o.checkout_id))).toEqual(new Set(bought.map((p) => p.checkoutId)));
    for (const p of bought) {
      expect(await count("select count(*) as n from sandbox_charges where idempotency_key like ? and status = 'succeeded'", [`checkout:${p.checkoutId}:charge%`])).toBe(1);
    }

    // Refunds: both replicas are asked to refund each order in full at once; one refund per order.
    const refunds = await Promise.all(
      orders.map((o: { id: string }) =>
        Promise.all(replicas.map((r) => call(r.url, s.token, 'POST', '/v1/refunds/', { order_id: o.id, reason: 'customer_request', amount: 1500 }))),
      ),
    );
    for (const pair of refunds) expect(pair.filter((r: { status: number }) => r.status === 201)).toHaveLength(1);
    await until(async () => {
      const page = await call(a.url, s.token, 'GET', `/v1/orders/?product_id=${product.id}&limit=100`);
      return page.body.items.every((o: { status: string }) => o.status === 'refunded') && page.body.items;
    }, 120_000);
    expect(await count('select count(*) as n from refunds where order_id in (select id from orders where product_id = ?)', [product.id])).toBe(PURCHASES);

    // Renewals: one paid renewal order per subscription, and each period rolled once.
    await until(async () => {
      const n = await count("select count(*) as n from orders where subscription_id = any(?::uuid[]) and billing_reason = 'subscription_cycle'", [`{${subscriptionIds.join(',')}}`]);
      return n >= RENEWALS;
    }, 120_000);
    expect(await count("select count(*) as n from orders where subscription_id = any(?::uuid[]) and billing_reason = 'subscription_cycle'", [`{${subscriptionIds.join(',')}}`])).toBe(RENEWALS);

    // Webhooks: every event of the subscribed types arrives, each once (no loss, no duplicate).
    const TYPES = ['order.created', 'refund.created', 'subscription.updated'];
    await until(async () => {
      const types = rx.accepted.map((r) => r.type);
      return (
        types.filter((t) => t === 'order.created').length >= PURCHASES + RENEWALS && types.filter((t) => t === 'refund.created').length >= PURCHASES
      );
    }, 120_000);
    const emitted = await until(async () => {
      const n = await count('select count(*) as n from outbox_events where organization_id = ? and type = any(?::text[])', [
        s.organization.id,
        `{${TYPES.join(',')}}`,
      ]);
      return rx.accepted.length >= n && n;
    }, 120_000);
    const ids = rx.accepted.map((r) => r.id);
    expect(ids).toHaveLength(emitted);
    expect(new Set(ids).size).toBe(emitted);
    expect(rx.rejected).toEqual([]);
  });
});
