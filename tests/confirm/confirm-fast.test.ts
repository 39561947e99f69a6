/**
 * The confirmation's common step 1 (checkouts/confirm-fast.ts: one locking read, the rows mapped to
 * entities) against the ORM path (confirm.ts `lockCheckoutBySecret` and its populate) on identical
 * input: two checkouts of the same product, one confirmed with the common path switched off, one with
 * it on, must give the same answer, the same checkout, customer, session and charge rows and the same
 * events, with ids, secrets, e-mail addresses and charge ids masked (each distinct value becomes a
 * numbered placeholder in order of appearance, so a value shared within one side stays shared) and
 * timestamps masked.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confirmFastPathStats, setConfirmFastPath } from '../../api/src/modules/checkouts/confirm-fast.ts';
import { confirmCommitSqlStats } from '../../api/src/modules/checkouts/confirm-commit-sql.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, call, confirmRaw, newCheckout, type Seller } from './helpers.ts';
import { masked } from '../masking.ts';

let srv: TestServer;
let s: Seller;

beforeAll(async () => {
  srv = await startTestServer();
  s = await sellerWithSdk(srv, [...CONFIRM_SCOPES, 'organizations:write']);
  const tax = await call(srv.url, s.token, 'POST', '/v1/tax-rates/', { country: 'DE', basis_points: 1900 });
  expect(tax.status).toBe(201);
});
afterAll(async () => {
  setConfirmFastPath(true);
  await srv?.close();
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const SECRET = /polar_(c|cst)_[A-Za-z0-9_-]+/g;
const EMAIL = /[a-z0-9.+-]+@example\.com/g;
const TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)/g;
const GRAVATAR = /avatar\/[0-9a-f]{32}/g;
const CHARGE = /\b(ch|cus|pm|sbx|pi|seti)_[A-Za-z0-9_-]+/g;

/** What `masked` replaces in the compared JSON, in this order. */
const KINDS = [['secret', SECRET], ['id', UUID], ['email', EMAIL], ['time', TIME], ['charge', CHARGE], ['gravatar', GRAVATAR]] as const;

/** Everything the confirmation wrote for a checkout: its row, its customer's row, the session, the charge attempt, the workflow start, its events. */
async function written(checkoutId: string) {
  const em = srv.deps.orm.em.fork();
  const [checkout] = await em.execute<Record<string, unknown>[]>(`select * from checkouts where id = ?`, [checkoutId]);
  if (!checkout) throw new Error(`checkout ${checkoutId} not found`);
  const customers = await em.execute(`select * from customers where id = ?`, [checkout.customer_id]);
  const sessions = await em.execute(`select customer_id, checkout_id, expires_at > now() as live from customer_sessions where checkout_id = ?`, [checkoutId]);
  const attempts = await em.execute(`select idempotency_key, request, status, charge_id from checkout_charge_attempts where checkout_id = ? order by created_at`, [checkoutId]);
  const starts = await em.execute(`select workflow_type, workflow_id, task_queue, args, metadata from workflow_starts where workflow_id like ?`, [`%${checkoutId}%`]);
  const redemptions = await em.execute(`select discount_id from discount_redemptions where checkout_id = ?`, [checkoutId]);
  // What the confirm request emitted (the fulfilment's later events are the worker's and not compared).
  const events = await em.execute(
    `select type, data from outbox_events
      where (type = 'checkout.updated' and data->>'id' = ? and data->>'status' in ('open', 'confirmed'))
         or (type in ('customer.created', 'customer.updated') and data->>'id' = ?)
      order by seq`,
    [checkoutId, checkout.customer_id ?? '00000000-0000-0000-0000-000000000000'],
  );
  const { created_at: _c, modified_at: _m, client_secret: _s, expires_at: _e, ...row } = checkout;
  return masked({ row, customers, sessions, attempts, starts, redemptions, events }, KINDS);
}

interface Case {
  name: string;
  product: Record<string, unknown>;
  create?: Record<string, unknown>;
  body: (email: string) => Record<string, unknown>;
  /** A customer with the buyer's e-mail exists before the confirmation (with these fields). */
  existingCustomer?: boolean | Record<string, unknown>;
  status?: number;
}

const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];
const buyer = (email: string, country = 'US') => ({ customer_email: email, customer_name: 'Bea Buyer', customer_billing_address: { country } });

const cases: Case[] = [
  { name: 'a one-time product, a new buyer', product: { prices: fixed(2500) }, body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_visa' }) },
  { name: 'a taxed country', product: { prices: fixed(1000) }, body: (e) => ({ ...buyer(e, 'DE'), customer_tax_id: null, confirmation_token_id: 'tok_visa' }) },
  {
    name: 'a buyer who is already a customer without a name',
    product: { prices: fixed(700) },
    existingCustomer: true,
    body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_mastercard' }),
  },
  {
    name: 'a buyer who is already a customer with a name and an address',
    product: { prices: fixed(800) },
    existingCustomer: { name: 'Known Name', billing_address: { country: 'FR', city: 'Lyon' } },
    body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_visa' }),
  },
  {
    name: 'a subscription for a buyer who is already a customer',
    product: { prices: [{ amount_type: 'fixed', price_amount: 1100, price_currency: 'usd' }], recurring_interval: 'month' },
    existingCustomer: true,
    body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_visa' }),
  },
  {
    name: 'a subscription',
    product: { prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }], recurring_interval: 'month' },
    body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_visa' }),
  },
  {
    name: 'a custom amount chosen at creation',
    product: { prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, preset_amount: 1500 }] },
    create: { amount: 2200 },
    body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_visa' }),
  },
  { name: 'a free product, no card', product: { prices: [{ amount_type: 'free' }] }, body: (e) => ({ customer_email: e }) },
  { name: 'a declined card', product: { prices: fixed(1200) }, body: (e) => ({ ...buyer(e), confirmation_token_id: 'tok_chargeDeclined' }), status: 400 },
  { name: 'a missing name on a paid checkout', product: { prices: fixed(1200) }, body: (e) => ({ customer_email: e, confirmation_token_id: 'tok_visa' }), status: 422 },
];

async function run(c: Case, productId: string, fast: boolean) {
  const email = `fast-${randomUUID().slice(0, 8)}@example.com`;
  if (c.existingCustomer) {
    const fields = typeof c.existingCustomer === 'object' ? c.existingCustomer : {};
    const made = await call(srv.url, s.token, 'POST', '/v1/customers/', { email, metadata: { tier: 'gold' }, ...fields });
    expect(made.status).toBe(201);
  }
  const checkout = await newCheckout(srv, s, productId, c.create ?? {});
  setConfirmFastPath(fast);
  const before = confirmFastPathStats.used;
  const commitsBefore = confirmCommitSqlStats.used;
  const res = await confirmRaw(srv, checkout.client_secret, c.body(email)).finally(() => setConfirmFastPath(true));
  return {
    status: res.status,
    body: masked(res.body, KINDS),
    rows: await written(checkout.id),
    fastUsed: confirmFastPathStats.used - before,
    commitSqlUsed: confirmCommitSqlStats.used - commitsBefore,
  };
}

describe('the confirmation: common path and ORM path on identical input', () => {
  for (const c of cases) {
    it(`gives the same answer, rows and events: ${c.name}`, async () => {
      const product = await createProduct(srv.url, s.token, { name: `Fast ${c.name}`, ...c.product });
      const orm = await run(c, product.id, false);
      const common = await run(c, product.id, true);
      expect(orm.status).toBe(c.status ?? 200);
      expect(orm.fastUsed).toBe(0);
      expect(common.fastUsed).toBe(1);
      // Step 3 as one statement (confirm-commit-sql.ts) on the common path when the confirmation commits.
      expect(orm.commitSqlUsed).toBe(0);
      expect(common.commitSqlUsed).toBe(orm.status === 200 ? 1 : 0);
      expect(common.status).toBe(orm.status);
      expect(common.body).toEqual(orm.body);
      expect(common.rows).toEqual(orm.rows);
    });
  }

  it('leaves a checkout with a discount to the ORM path, which reserves its redemption', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Fast discounted', prices: fixed(2000) });
    const discount = await call(srv.url, s.token, 'POST', '/v1/discounts/', { name: 'Ten', type: 'percentage', basis_points: 1000, duration: 'once', max_redemptions: 5 });
    expect(discount.status).toBe(201);
    const checkout = await newCheckout(srv, s, product.id, { discount_id: discount.body.id });
    const before = confirmFastPathStats.used;
    const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(`fast-${randomUUID().slice(0, 8)}@example.com`), confirmation_token_id: 'tok_visa' });
    expect(res.status).toBe(200);
    expect(res.body.discount_id).toBe(discount.body.id);
    expect(confirmFastPathStats.used).toBe(before);
    const rows = await srv.deps.orm.em.fork().execute(`select discount_id from discount_redemptions where checkout_id = ?`, [checkout.id]);
    expect(rows).toEqual([{ discount_id: discount.body.id }]);
  });
});
