/**
 * A refund through the Stripe adapter: the API and worker configured with PAYMENT_PROCESSOR=stripe
 * talk (with the real `stripe` SDK) to the local server that speaks Stripe's protocol.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe-server.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buy, call, fixed, orderWithStatus, refundSeller } from './helpers.ts';

let fake: FakeStripe;
let srv: TestServer;

beforeAll(async () => {
  fake = await startFakeStripe();
  srv = await startTestServer({
    env: { PAYMENT_PROCESSOR: 'stripe', STRIPE_SECRET_KEY: fake.secretKey, STRIPE_API_BASE: fake.url },
  });
});
afterAll(async () => {
  await srv?.close();
  await fake?.close();
});

describe('refunds with the Stripe processor', () => {
  it('refunds at Stripe with an idempotency key per refund and settles the order', async () => {
    const s = await refundSeller(srv);
    const product = await createProduct(srv.url, s.token, { name: 'Theme', prices: fixed(1500) });
    const order = await buy(srv, s, product.id);
    const charge = fake.requests.find((r) => r.method === 'POST' && r.path === '/v1/payment_intents');
    expect(charge).toBeDefined();

    const res = await call(srv.url, s.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'customer_request', amount: 1000 });
    expect(res.status).toBe(201);
    const settled = await orderWithStatus(srv, s, order.id, 'partially_refunded', 1000);
    expect(settled.refunded_amount).toBe(1000);
    const refunds = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds');
    expect(refunds).toHaveLength(1);
    expect(refunds[0]).toMatchObject({ idempotencyKey: `refund:${res.body.id}`, body: { amount: '1000' } });

    const second = await call(srv.url, s.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'other', amount: 500 });
    expect(second.status).toBe(201);
    expect(second.body.id).not.toBe(res.body.id);
    await orderWithStatus(srv, s, order.id, 'refunded', 1500);
    const both = fake.requests.filter((r) => r.method === 'POST' && r.path === '/v1/refunds');
    expect(both).toHaveLength(2);
    // The second refund has a key of its own: Stripe would answer a reused key with the first refund.
    expect(both[1]).toMatchObject({ idempotencyKey: `refund:${second.body.id}`, body: { amount: '500' } });
    expect(both[1]!.idempotencyKey).not.toBe(both[0]!.idempotencyKey);
  });

  it('has no sandbox card endpoint', async () => {
    const res = await call(srv.url, null, 'POST', '/v1/sandbox/confirmation-tokens', { card_number: '4242424242424242', exp_month: 12, exp_year: 2099, cvc: '123' });
    expect(res.status).toBe(404);
  });
});
