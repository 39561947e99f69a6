/**
 * Concurrency of the purchase path at the sizes of issue #5, with the test harness's default pool
 * (API and worker share 4 connections): 20 concurrent confirms of one checkout make one charge and
 * one order; 50 concurrent checkouts against a discount with max_redemptions 10 redeem it exactly 10
 * times, the other 40 are refused on `body.discount_id` and charged nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, fulfilled, newCheckout, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let s: Seller;

beforeAll(async () => {
  srv = await startTestServer();
  s = await confirmSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;
const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

async function charges(checkoutId: string): Promise<number> {
  const rows = await srv.deps.orm.em
    .fork()
    .execute<{ n: string }[]>("select count(*) as n from sandbox_charges where idempotency_key like ? and status = 'succeeded'", [
      `checkout:${checkoutId}:charge%`,
    ]);
  return Number(rows[0]!.n);
}

describe('concurrent confirms of one checkout', () => {
  it('twenty at once make exactly one charge and one order; the others are told it is taken', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Race', prices: fixed(1500) });
    const c = await newCheckout(srv, s, product.id);
    const body = { ...buyer(email('racer')), confirmation_token_id: 'tok_visa' };
    const results = await Promise.all(Array.from({ length: 20 }, () => confirmRaw(srv, c.client_secret, body)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 200)) {
      expect([409, 403], JSON.stringify(r.body)).toContain(r.status);
      expect(['ResourceAlreadyExists', 'NotOpenCheckout']).toContain(r.body.error);
    }
    expect(await fulfilled(srv, s, c.id)).toBe('succeeded');
    expect(await charges(c.id)).toBe(1);
    const orders = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${c.id}`);
    expect(orders.body.items).toHaveLength(1);
    expect(orders.body.items[0]).toMatchObject({ status: 'paid', total_amount: 1500 });
  });
});

describe('a discount with max_redemptions 10', () => {
  it('is redeemed exactly ten times by fifty concurrent checkouts', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Limited', prices: fixed(2000) });
    const discount = await call(srv.url, s.token, 'POST', '/v1/discounts/', {
      name: 'Early bird',
      type: 'percentage',
      basis_points: 2500,
      duration: 'once',
      max_redemptions: 10,
    });
    expect(discount.status).toBe(201);
    const checkouts = await Promise.all(Array.from({ length: 50 }, () => newCheckout(srv, s, product.id, { discount_id: discount.body.id })));
    const results = await Promise.all(
      checkouts.map((c) => confirmRaw(srv, c.client_secret, { ...buyer(email('early')), confirmation_token_id: 'tok_visa' })),
    );
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(10);
    for (const r of ok) expect(r.body).toMatchObject({ net_amount: 1500, discount_amount: 500, total_amount: 1500 });
    for (const r of results.filter((x) => x.status !== 200)) {
      expect(r.status, JSON.stringify(r.body)).toBe(422);
      expect(r.body.detail[0].loc).toEqual(['body', 'discount_id']);
      expect(r.body.detail[0].msg).toBe('Discount has reached its maximum redemptions.');
    }
    const after = await call(srv.url, s.token, 'GET', `/v1/discounts/${discount.body.id}`);
    expect(after.body.redemptions_count).toBe(10);
    const [row] = await srv.deps.orm.em
      .fork()
      .execute<{ n: string }[]>('select count(*) as n from discount_redemptions where discount_id = ?', [discount.body.id]);
    expect(Number(row!.n)).toBe(10);

    const refused = checkouts.filter((_, i) => results[i]!.status !== 200);
    for (const c of refused) expect(await charges(c.id)).toBe(0);
    const stillOpen = await call(srv.url, null, 'GET', `/v1/checkouts/client/${refused[0]!.client_secret}`);
    expect(stillOpen.body.status).toBe('open');

    for (const r of ok) expect(await fulfilled(srv, s, r.body.id)).toBe('succeeded');
    const orders = await call(srv.url, s.token, 'GET', `/v1/orders/?discount_id=${discount.body.id}&limit=100`);
    expect(orders.body.items).toHaveLength(10);
    for (const o of orders.body.items) {
      expect(o).toMatchObject({ status: 'paid', subtotal_amount: 2000, discount_amount: 500, net_amount: 1500, total_amount: 1500 });
    }
  });
});
