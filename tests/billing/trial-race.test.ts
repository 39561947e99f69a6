/**
 * One trial per customer and product under a race: one buyer confirming several checkouts of the same
 * trial product at the same moment (concurrent HTTP confirms against the real API, worker, PostgreSQL)
 * gets exactly one trial. The others are refused with 403 `TrialAlreadyRedeemed`, nothing is charged
 * for them, and their checkouts now charge the first period; the buyer ends with one trialing
 * subscription.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, fulfilled, newCheckout, until, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let s: Seller;
let holder: pg.Client | null = null;

beforeAll(async () => {
  srv = await startTestServer();
  s = await confirmSeller(srv);
});
afterAll(async () => {
  await holder?.end().catch(() => {});
  await srv?.close();
});

const fixed = [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'usd' }];
const trialPlan = () =>
  createProduct(srv.url, s.token, { name: `Trial ${randomUUID().slice(0, 6)}`, recurring_interval: 'month', trial_interval: 'week', trial_interval_count: 2, prices: fixed });

async function succeededCharges(checkoutIds: string[]): Promise<number> {
  const rows = await srv.deps.orm.em
    .fork()
    .execute<{ n: string }[]>(
      `select count(*) as n from sandbox_charges where status = 'succeeded' and (${checkoutIds.map(() => 'idempotency_key like ?').join(' or ')})`,
      checkoutIds.map((id) => `checkout:${id}:charge%`),
    );
  return Number(rows[0]!.n);
}

/** Confirms every checkout at once as `email`; checks the race's outcome and answers the winner and losers. */
async function race(checkouts: { id: string; client_secret: string }[], email: string) {
  for (const c of checkouts) {
    const got = await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.client_secret}`);
    expect([got.status, got.body.active_trial_interval, got.body.is_payment_required]).toEqual([200, 'week', false]);
  }
  const body = { ...buyer(email), confirmation_token_id: 'tok_visa' };
  const results = await Promise.all(checkouts.map((c) => confirmRaw(srv, c.client_secret, body)));
  const won = checkouts.filter((_, i) => results[i]!.status === 200);
  const lost = checkouts.filter((_, i) => results[i]!.status !== 200);
  expect(won, JSON.stringify(results.map((r) => [r.status, r.body?.error]))).toHaveLength(1);
  expect(results.filter((r) => r.status !== 200).map((r) => [r.status, r.body.error])).toEqual(lost.map(() => [403, 'TrialAlreadyRedeemed']));
  return { winner: won[0]!, lost };
}

async function expectOneTrial(customerEmail: string, winnerId: string, lost: { id: string; client_secret: string }[], product: string) {
  expect(await fulfilled(srv, s, winnerId)).toBe('succeeded');
  const customers = await call(srv.url, s.token, 'GET', `/v1/customers/?email=${encodeURIComponent(customerEmail)}`);
  expect(customers.body.items).toHaveLength(1);
  const subs = await until(async () => {
    const r = await call(srv.url, s.token, 'GET', `/v1/subscriptions/?customer_id=${customers.body.items[0].id}&product_id=${product}`);
    return r.body.items.length ? r.body.items : null;
  });
  expect(subs.map((x: { status: string; trial_start: string | null }) => [x.status, x.trial_start != null])).toEqual([['trialing', true]]);
  // The losers were charged nothing, and their checkouts now charge the first period at once.
  expect(await succeededCharges([winnerId, ...lost.map((c) => c.id)])).toBe(0);
  for (const c of lost) {
    const got = await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.client_secret}`);
    expect([got.status, got.body.status, got.body.active_trial_interval, got.body.is_payment_required, got.body.total_amount]).toEqual([
      200,
      'open',
      null,
      true,
      1900,
    ]);
  }
}

describe('one trial per customer and product, under concurrent confirms', () => {
  it('a new buyer confirming three checkouts of the product at once gets one trial; the others are refused and charged nothing', async () => {
    const product = await trialPlan();
    for (let round = 0; round < 3; round++) {
      const email = `racer-${randomUUID().slice(0, 8)}@example.com`;
      const checkouts = await Promise.all([0, 1, 2].map(() => newCheckout(srv, s, product.id)));
      const { winner, lost } = await race(checkouts, email);
      await expectOneTrial(email, winner.id, lost, product.id);
    }
  });

  it("an existing customer's two checkouts (by customer_id) confirmed at once give one trial", async () => {
    const product = await trialPlan();
    const email = `known-${randomUUID().slice(0, 8)}@example.com`;
    const customer = await call(srv.url, s.token, 'POST', '/v1/customers/', { email, name: 'Known Buyer' });
    expect(customer.status).toBe(201);
    const checkouts = await Promise.all([0, 1].map(() => newCheckout(srv, s, product.id, { customer_id: customer.body.id })));
    const { winner, lost } = await race(checkouts, email);
    await expectOneTrial(email, winner.id, lost, product.id);
  });

  it('the refused checkout, confirmed again, charges the first period at once', async () => {
    const product = await trialPlan();
    // A second subscription of the product is allowed here, so the paid one is not refused as a duplicate.
    await srv.deps.orm.em
      .fork()
      .execute(`update organizations set subscription_settings = subscription_settings || '{"allow_multiple_subscriptions": true}'::jsonb where id = ?`, [s.organization.id]);
    const email = `again-${randomUUID().slice(0, 8)}@example.com`;
    const checkouts = await Promise.all([0, 1].map(() => newCheckout(srv, s, product.id)));
    const { lost } = await race(checkouts, email);
    const again = await confirmRaw(srv, lost[0]!.client_secret, { ...buyer(email), confirmation_token_id: 'tok_visa' });
    expect([again.status, again.body.active_trial_interval, again.body.total_amount]).toEqual([200, null, 1900]);
    expect(await fulfilled(srv, s, lost[0]!.id)).toBe('succeeded');
    expect(await succeededCharges([lost[0]!.id])).toBe(1);
  });

  it("while other transactions reference the seller's organization and product (as a fulfilment's inserts do), the refused checkout is still recomputed", async () => {
    const product = await trialPlan();
    // A transaction holding the key-share locks an insert referencing the organization and the product
    // takes. Recomputing the losing checkout once locked those rows for update and deadlocked with the
    // winner's fulfilment (seen in CI: the loser kept showing the trial).
    holder = new pg.Client({ connectionString: srv.databaseUrl });
    await holder.connect();
    await holder.query('begin');
    await holder.query('select 1 from organizations where id = $1 for key share', [s.organization.id]);
    await holder.query('select 1 from products where id = $1 for key share', [product.id]);
    const email = `held-${randomUUID().slice(0, 8)}@example.com`;
    const checkouts = await Promise.all([0, 1].map(() => newCheckout(srv, s, product.id)));
    const { winner, lost } = await race(checkouts, email);
    await holder.query('rollback');
    await expectOneTrial(email, winner.id, lost, product.id);
  });
});
