/**
 * `POST /v1/checkouts/` written by one statement (checkouts/create-sql.ts) against the ORM path
 * (commit.ts `commitNewCheckoutRead`) on identical input: each case creates a checkout with the
 * statement switched off, then one with it on, and compares the answer, the checkout's row, its
 * `checkout_products` rows and its `checkout.created` event, with ids, secrets, e-mail addresses and
 * timestamps masked (each distinct value becomes a numbered placeholder in order of appearance). A
 * refused input must give the same status and body on both paths and write nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSqlStats, setCreateSqlPath } from '../../api/src/modules/checkouts/create-sql.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, checkoutSeller, createProduct, type Seller } from './helpers.ts';
import { masked } from '../masking.ts';

let srv: TestServer;
let s: Seller;
let products: Record<string, { id: string; prices: { id: string }[] }>;
let customerId: string;
let discountId: string;

const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

beforeAll(async () => {
  srv = await startTestServer();
  s = await checkoutSeller(srv);
  const tax = await call(srv.url, s.token, 'POST', '/v1/tax-rates/', { country: 'DE', basis_points: 1900 });
  expect(tax.status, JSON.stringify(tax.body)).toBe(201);
  const make = (o: Record<string, unknown>) => createProduct(srv.url, s.token, o);
  products = {
    one: await make({ name: 'One-time', prices: fixed(2500) }),
    two: await make({ name: 'Second', prices: fixed(900) }),
    custom: await make({ name: 'Pay what you want', prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, preset_amount: 1500 }] }),
    free: await make({ name: 'Free', prices: [{ amount_type: 'free' }] }),
    monthly: await make({ name: 'Monthly', recurring_interval: 'month', prices: fixed(1100) }),
    archived: await make({ name: 'Archived', prices: fixed(100) }),
  };
  expect((await call(srv.url, s.token, 'PATCH', `/v1/products/${products.archived!.id}`, { is_archived: true })).status).toBe(200);
  const customer = await call(srv.url, s.token, 'POST', '/v1/customers/', {
    email: `known-${randomUUID().slice(0, 8)}@example.com`, name: 'Known Buyer', external_id: `ext-${randomUUID().slice(0, 8)}`,
    billing_address: { country: 'FR', city: 'Lyon' },
  });
  expect(customer.status).toBe(201);
  customerId = customer.body.id;
  const discount = await call(srv.url, s.token, 'POST', '/v1/discounts/', { name: 'Ten', type: 'percentage', basis_points: 1000, duration: 'once' });
  expect(discount.status).toBe(201);
  discountId = discount.body.id;
});
afterAll(async () => {
  setCreateSqlPath(true);
  await srv?.close();
});

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
const SECRET = /polar_c_[A-Za-z0-9_-]+/g;
const EMAIL = /[a-z0-9.+-]+@example\.com/g;
const TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)/g;

/** What `masked` replaces in the compared JSON, in this order. */
const KINDS = [['secret', SECRET], ['id', UUID], ['email', EMAIL], ['time', TIME]] as const;

/** The checkout's row (its lifetime as the difference of its two times), its product rows in order and its events. */
async function written(checkoutId: string) {
  const em = srv.deps.orm.em.fork();
  const [row] = await em.execute<Record<string, unknown>[]>(
    `select c.*, extract(epoch from c.expires_at - c.created_at)::int as lifetime from checkouts c where c.id = ?`, [checkoutId]);
  const pivot = await em.execute(`select product_id from checkout_products where checkout_id = ? order by id`, [checkoutId]);
  const events = await em.execute(`select type, data from outbox_events where data->>'id' = ? order by seq`, [checkoutId]);
  return masked({ row, pivot, events }, KINDS);
}

async function checkoutCount(): Promise<number> {
  const [r] = await srv.deps.orm.em.fork().execute<{ n: number }[]>(`select count(*)::int as n from checkouts where organization_id = ?`, [s.organization.id]);
  return r!.n;
}

async function create(body: Record<string, unknown>, statement: boolean) {
  setCreateSqlPath(statement);
  const before = createSqlStats.used;
  const res = await call(srv.url, s.token, 'POST', '/v1/checkouts/', body).finally(() => setCreateSqlPath(true));
  return { res, used: createSqlStats.used - before };
}

const cases: [string, () => Record<string, unknown>][] = [
  ['a product, nothing else', () => ({ product_id: products.one!.id })],
  ['a price by id', () => ({ product_price_id: products.one!.prices[0]!.id })],
  ['two products', () => ({ products: [products.two!.id, products.one!.id] })],
  ['a buyer in a taxed country with every optional field', () => ({
    product_id: products.one!.id, customer_email: `b-${randomUUID().slice(0, 6)}@example.com`, customer_name: 'Bea Buyer',
    customer_billing_address: { country: 'DE', city: 'Berlin', postal_code: '10115', line1: 'Str. 1' }, customer_tax_id: null,
    customer_ip_address: '203.0.113.9', metadata: { ref: 'x', n: 3, ok: true }, customer_metadata: { tier: 'gold' },
    success_url: 'https://shop.example.com/done', embed_origin: 'https://shop.example.com', allow_discount_codes: false,
  })],
  ['a custom amount', () => ({ product_id: products.custom!.id, amount: 2200 })],
  ['a free product', () => ({ product_id: products.free!.id })],
  ['an existing customer by id', () => ({ product_id: products.one!.id, customer_id: customerId })],
  ['a discount', () => ({ product_id: products.one!.id, discount_id: discountId })],
  ['a subscription with a trial', () => ({ product_id: products.monthly!.id, trial_interval: 'week', trial_interval_count: 2 })],
];

describe('the checkout creation: statement and ORM path on identical input', () => {
  it.each(cases)('gives the same answer, rows and event: %s', async (_name, body) => {
    const input = body();
    const orm = await create(input, false);
    const sql = await create(input, true);
    expect(orm.res.status).toBe(201);
    expect(sql.res.status).toBe(201);
    expect(orm.used).toBe(0);
    expect(sql.used).toBe(1);
    expect(masked(sql.res.body, KINDS)).toEqual(masked(orm.res.body, KINDS));
    const [a, b] = [await written(orm.res.body.id), await written(sql.res.body.id)];
    expect((a as { events: unknown[] }).events).toHaveLength(1);
    expect(b).toEqual(a);
    // The event carries the answer itself.
    const [event] = await srv.deps.orm.em.fork().execute(`select data from outbox_events where data->>'id' = ? and type = 'checkout.created'`, [sql.res.body.id]);
    expect(event!.data).toEqual(sql.res.body);
  });

  const refused: [string, () => Record<string, unknown>][] = [
    ['an unknown product', () => ({ product_id: randomUUID() })],
    ['an archived product', () => ({ product_id: products.archived!.id })],
    ['an amount under the minimum', () => ({ product_id: products.custom!.id, amount: 100 })],
    ['an unknown customer', () => ({ product_id: products.one!.id, customer_id: randomUUID() })],
    ['a trial on a one-time product', () => ({ product_id: products.one!.id, trial_interval: 'week', trial_interval_count: 1 })],
  ];
  it.each(refused)('refuses with the same answer and writes nothing: %s', async (_name, body) => {
    const input = body();
    const count = await checkoutCount();
    const orm = await create(input, false);
    const sql = await create(input, true);
    expect(orm.res.status).toBe(422);
    expect(sql.res.status).toBe(orm.res.status);
    expect(sql.res.body).toEqual(orm.res.body);
    expect(sql.used).toBe(0);
    expect(await checkoutCount()).toBe(count);
  });
});
