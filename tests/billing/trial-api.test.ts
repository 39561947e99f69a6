/**
 * Trials through the seller and public API: `trial_interval` / `trial_interval_count` on products,
 * checkout links and checkouts (validated, 422 at the field; both or neither; recurring products
 * only), shown in the read models, and a checkout's active trial making the payment a card setup.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, checkoutSeller, type Seller } from '../checkouts/helpers.ts';
import { locs } from '../catalogue/helpers-c.ts';

let srv: TestServer;
let s: Seller;
const fixed = [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'usd' }];

beforeAll(async () => {
  srv = await startTestServer();
  s = await checkoutSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

const product = (extra: Record<string, unknown>) =>
  call(srv.url, s.token, 'POST', '/v1/products/', { name: `Plan ${randomUUID().slice(0, 6)}`, prices: fixed, organization_id: s.organization.id, ...extra });

describe('trial fields', () => {
  it('products: set, shown, changed and cleared; refused without its pair or on a one-time product', async () => {
    const created = await product({ recurring_interval: 'month', trial_interval: 'week', trial_interval_count: 2 });
    expect(created.status).toBe(201);
    expect([created.body.trial_interval, created.body.trial_interval_count]).toEqual(['week', 2]);
    const id = created.body.id;

    const alone = await product({ recurring_interval: 'month', trial_interval: 'day' });
    expect(alone.status).toBe(422);
    expect(locs(alone.body)).toEqual(['body.trial_interval_count']);
    const oneTime = await product({ trial_interval: 'day', trial_interval_count: 7 });
    expect(oneTime.status).toBe(422);
    expect(locs(oneTime.body)).toEqual(['body.trial_interval']);
    const tooLong = await product({ recurring_interval: 'month', trial_interval: 'day', trial_interval_count: 1001 });
    expect(tooLong.status).toBe(422);
    expect(locs(tooLong.body)).toEqual(['body.trial_interval_count']);
    const unknown = await product({ recurring_interval: 'month', trial_interval: 'fortnight', trial_interval_count: 1 });
    expect(unknown.status).toBe(422);
    expect(locs(unknown.body)).toEqual(['body.trial_interval']);

    const renamed = await call(srv.url, s.token, 'PATCH', `/v1/products/${id}`, { name: 'Renamed plan' });
    expect([renamed.status, renamed.body.trial_interval, renamed.body.trial_interval_count]).toEqual([200, 'week', 2]);
    const changed = await call(srv.url, s.token, 'PATCH', `/v1/products/${id}`, { trial_interval: 'month', trial_interval_count: 1 });
    expect([changed.status, changed.body.trial_interval, changed.body.trial_interval_count]).toEqual([200, 'month', 1]);
    const cleared = await call(srv.url, s.token, 'PATCH', `/v1/products/${id}`, { trial_interval: null, trial_interval_count: null });
    expect([cleared.status, cleared.body.trial_interval, cleared.body.trial_interval_count]).toEqual([200, null, null]);
    const got = await call(srv.url, s.token, 'GET', `/v1/products/${id}`);
    expect([got.status, got.body.trial_interval, got.body.trial_interval_count]).toEqual([200, null, null]);
  });

  it("checkout links carry their own trial to their checkouts, which show it as the buyer's active trial", async () => {
    const plan = (await product({ recurring_interval: 'month' })).body;
    const oneTime = (await product({})).body;
    const refused = await call(srv.url, s.token, 'POST', '/v1/checkout-links/', { product_id: oneTime.id, trial_interval: 'day', trial_interval_count: 3 });
    expect(refused.status).toBe(422);
    expect(locs(refused.body)).toEqual(['body.trial_interval']);

    const link = await call(srv.url, s.token, 'POST', '/v1/checkout-links/', { product_id: plan.id, trial_interval: 'day', trial_interval_count: 10 });
    expect(link.status).toBe(201);
    expect([link.body.trial_interval, link.body.trial_interval_count]).toEqual(['day', 10]);
    const redirect = await fetch(`${srv.url}/v1/checkout-links/${link.body.client_secret}/redirect`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const secret = new URL(redirect.headers.get('location')!).pathname.split('/').pop()!;
    const before = new Date();
    const c = await call(srv.url, null, 'GET', `/v1/checkouts/client/${secret}`);
    const after = new Date();
    expect(c.status).toBe(200);
    expect({
      trial: [c.body.trial_interval, c.body.trial_interval_count, c.body.active_trial_interval, c.body.active_trial_interval_count],
      pay: [c.body.is_payment_required, c.body.is_payment_setup_required, c.body.total_amount],
    }).toEqual({ trial: ['day', 10, 'day', 10], pay: [false, true, 1900] });
    const end = new Date(c.body.trial_end).getTime();
    expect(end).toBeGreaterThanOrEqual(before.getTime() + 10 * 86_400_000);
    expect(end).toBeLessThanOrEqual(after.getTime() + 10 * 86_400_000);

    const cleared = await call(srv.url, s.token, 'PATCH', `/v1/checkout-links/${link.body.id}`, { trial_interval: null, trial_interval_count: null });
    expect([cleared.status, cleared.body.trial_interval]).toEqual([200, null]);
  });

  it("checkouts: the seller's trial overrides the product's; a half pair is a 422", async () => {
    const plan = (await product({ recurring_interval: 'month', trial_interval: 'month', trial_interval_count: 1 })).body;
    const own = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: plan.id, trial_interval: 'week', trial_interval_count: 1 });
    expect(own.status).toBe(201);
    expect([own.body.active_trial_interval, own.body.active_trial_interval_count, own.body.is_payment_required]).toEqual(['week', 1, false]);
    const inherited = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: plan.id });
    expect([inherited.status, inherited.body.trial_interval, inherited.body.active_trial_interval, inherited.body.active_trial_interval_count]).toEqual([
      201,
      null,
      'month',
      1,
    ]);
    const half = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: plan.id, trial_interval_count: 3 });
    expect(half.status).toBe(422);
    expect(locs(half.body)).toEqual(['body.trial_interval']);
    const noTrial = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: (await product({ recurring_interval: 'month' })).body.id });
    expect([noTrial.status, noTrial.body.active_trial_interval, noTrial.body.is_payment_required, noTrial.body.trial_end]).toEqual([201, null, true, null]);
  });
});
