/**
 * The customer, order and subscription reads are built by PostgreSQL (`customers/read-sql.ts`,
 * `orders/read-sql.ts`, `subscriptions/read-sql.ts`); writes, webhooks and the portal still come from
 * the TypeScript serializers. On a varied set of rows (one-time and recurring orders, several lines,
 * refunds, discounts, custom field data, metadata, canceled / past_due / trialing subscriptions, a
 * deleted customer, an archived price, null fields), every read of the SQL path must be deep-equal to
 * what the ORM path (`listOrders` / `listSubscriptions` and the serializers) makes of the same rows.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { serializeCustomer } from '../../api/src/modules/customers/schemas.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { listOrders, type OrderListQuery } from '../../api/src/modules/orders/list.ts';
import { ORDER_POPULATE, serializeOrder } from '../../api/src/modules/orders/schemas.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { listSubscriptions, type SubscriptionListQuery } from '../../api/src/modules/subscriptions/list.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription } from '../../api/src/modules/subscriptions/schemas.ts';
import { containsPattern } from '../../api/src/kit/db.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
let other: Awaited<ReturnType<typeof seller>>;
const SCOPES = ['products:read', 'products:write', 'customers:read', 'customers:write', 'orders:read', 'subscriptions:read'];

async function call(token: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${srv.url}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, type: res.headers.get('content-type'), body: await json(res) };
}

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, n, n * 7 % 1000));
const ids = { customers: [] as string[], orders: [] as string[], subscriptions: [] as string[], products: [] as string[], discounts: [] as string[] };
let foreign: { customer: string; order: string; subscription: string };

async function product(token: string, body: Record<string, unknown>) {
  const r = await call(token, '/v1/products/', { method: 'POST', body });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body as { id: string; prices: { id: string }[] };
}

/** Rows written directly, so that stored shapes the API would not write itself are covered too. */
async function seed(orgId: string, token: string, otherOrgId: string, otherToken: string) {
  const oneTime = await product(token, { name: 'Book 100%', prices: [{ amount_type: 'fixed', price_amount: 1999, price_currency: 'EUR' }], metadata: { kind: 'book' } });
  const monthly = await product(token, { name: 'Monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900 }] });
  const yearly = await product(token, { name: 'Yearly custom', recurring_interval: 'year', prices: [{ amount_type: 'custom', minimum_amount: 500, preset_amount: 1000 }] });
  const repriced = await product(token, { name: 'Repriced', prices: [{ amount_type: 'fixed', price_amount: 100 }] });
  const oldPrice = repriced.prices[0]!.id;
  expect((await call(token, `/v1/products/${repriced.id}`, { method: 'PATCH', body: { prices: [{ amount_type: 'free' }] } })).status).toBe(200);
  const theirs = await product(otherToken, { name: 'Theirs', prices: [{ amount_type: 'fixed', price_amount: 500 }] });
  ids.products.push(oneTime.id, monthly.id, yearly.id, repriced.id);

  const em = srv.deps.orm.em.fork();
  const org = em.getReference(Organization, orgId);
  const customer = (n: number, email: string, extra: Partial<Customer> = {}) =>
    em.create(Customer, { id: randomUUID(), createdAt: at(n), organization: org, email, emailVerified: false, name: null, externalId: null, billingAddress: null, taxId: null, metadata: {}, userId: null, deletedAt: null, processorCustomerId: null, oauthAccounts: null, ...extra });
  const c = [
    customer(1, 'ada@example.com', { name: 'Ada', externalId: 'ext-1', emailVerified: true, modifiedAt: at(40), metadata: { tier: 'gold', seats: 5, vip: true }, taxId: ['DE123456789', 'eu_vat'], billingAddress: { line1: '1 Main St', line2: 'Apt 2', postal_code: '10115', city: 'Berlin', state: null, country: 'DE' } }),
    customer(2, 'bare@example.com', { billingAddress: { country: 'US' } as Customer['billingAddress'], taxId: ['123', null], metadata: { tier: 'free' } }),
    customer(3, 'zed+x@example.com', { name: '', externalId: 'ext_%3', metadata: { tier: 'gold', seats: 1 } }),
    customer(4, 'gone@example.com', { name: 'Gone', deletedAt: at(50) }),
    customer(3, 'bob@example.com', { name: 'bob_100%', metadata: { vip: false } }),
  ];
  const theirCustomer = em.create(Customer, { id: randomUUID(), organization: em.getReference(Organization, otherOrgId), email: 'theirs@example.com', emailVerified: false, metadata: {}, deletedAt: null });
  const discount = (name: string, extra: Partial<Discount>) =>
    em.create(Discount, { id: randomUUID(), organization: org, name, code: null, type: 'percentage', duration: 'once', durationInMonths: null, amount: null, currency: null, basisPoints: null, startsAt: null, endsAt: null, maxRedemptions: null, redemptionsCount: 0, metadata: {}, deletedAt: null, ...extra });
  const d = [
    discount('Launch', { code: 'LAUNCH', basisPoints: 2500, metadata: { campaign: 'x' }, maxRedemptions: 10, redemptionsCount: 3 }),
    discount('Alpha fixed', { type: 'fixed', duration: 'repeating', amount: 300, startsAt: at(0), endsAt: at(900), modifiedAt: at(60) }),
    discount('Forever', { duration: 'forever', basisPoints: null }),
  ];
  ids.discounts.push(...d.map((x) => x.id));
  const ref = (pid: string) => em.getReference(Product, pid);
  const price = (id: string) => em.getReference(ProductPrice, id);
  const sub = (n: number, cust: Customer, prod: typeof monthly, extra: Partial<Subscription>) =>
    em.create(Subscription, { id: randomUUID(), createdAt: at(n), organization: org, customer: cust, product: ref(prod.id), price: price(prod.prices[0]!.id), discount: null, checkout: null, amount: 900, currency: 'usd', recurringInterval: 'month', status: 'active', currentPeriodStart: at(n + 1), currentPeriodEnd: at(n + 2), cancelAtPeriodEnd: false, canceledAt: null, startedAt: at(n), endsAt: null, endedAt: null, customerCancellationReason: null, customerCancellationComment: null, paymentMethod: null, pendingProrationAmount: 0, trialStart: null, trialEnd: null, metadata: {}, ...extra });
  const subs = [
    sub(10, c[1]!, monthly, { discount: d[0], metadata: { seat: 'a', n: 2 } }),
    sub(11, c[0]!, yearly, { status: 'canceled', amount: 1000, recurringInterval: 'year', cancelAtPeriodEnd: true, canceledAt: at(30), endsAt: at(31), endedAt: at(32), customerCancellationReason: 'too_expensive', customerCancellationComment: 'meh', modifiedAt: at(33) }),
    sub(12, c[3]!, monthly, { status: 'past_due', currentPeriodEnd: null, startedAt: null }),
    sub(12, c[2]!, monthly, { status: 'trialing', amount: 0, trialStart: at(12), trialEnd: at(20), discount: d[1] }),
    sub(14, c[4]!, monthly, { status: 'incomplete', startedAt: at(5), discount: d[2] }),
  ];
  const theirSub = sub(15, theirCustomer, theirs, { organization: em.getReference(Organization, otherOrgId) });
  const order = (n: number, cust: Customer, prod: typeof monthly, extra: Partial<Order>) =>
    em.create(Order, { id: randomUUID(), createdAt: at(n), organization: org, customer: cust, product: ref(prod.id), productPrice: price(prod.prices[0]!.id), discount: null, subscription: null, checkout: null, status: 'paid', billingReason: 'purchase', subtotalAmount: 1999, discountAmount: 0, netAmount: 1999, taxAmount: 0, totalAmount: 1999, refundedAmount: 0, refundedTaxAmount: 0, currency: 'eur', billingAddress: null, customFieldData: {}, metadata: {}, processorChargeId: null, lines: null, ...extra });
  const orders = [
    order(20, c[0]!, oneTime, { discount: d[0], discountAmount: 500, netAmount: 1499, taxAmount: 285, totalAmount: 1784, customFieldData: { company: 'Acme', seats: 3, terms: true, none: null }, metadata: { source: 'web', n: 1, ok: false }, billingAddress: { line1: '1 Main St', line2: null, postal_code: '10115', city: 'Berlin', state: null, country: 'DE' }, modifiedAt: at(41) }),
    order(21, c[1]!, monthly, { status: 'pending', billingReason: 'subscription_create', subscription: subs[0], subtotalAmount: 900, netAmount: 900, totalAmount: 900, currency: 'usd' }),
    order(22, c[0]!, monthly, { status: 'partially_refunded', billingReason: 'subscription_cycle', subscription: subs[0], subtotalAmount: 1400, netAmount: 1400, totalAmount: 1540, taxAmount: 140, refundedAmount: 500, refundedTaxAmount: 50, currency: 'usd', lines: [
      { id: randomUUID(), label: 'Monthly', amount: 900, discountAmount: 0, taxAmount: 90, proration: false, productPriceId: monthly.prices[0]!.id },
      { id: randomUUID(), label: 'API calls: 500 units', amount: 500, discountAmount: 0, taxAmount: 50, proration: true, productPriceId: monthly.prices[0]!.id, meterId: null, usage: '500' },
    ] }),
    order(23, c[3]!, repriced, { status: 'refunded', discount: d[1], productPrice: price(oldPrice), subtotalAmount: 100, discountAmount: 100, netAmount: 0, totalAmount: 0, refundedAmount: 0 }),
    order(23, c[2]!, yearly, { billingReason: 'subscription_update', subscription: subs[3], billingAddress: { country: 'FR' } as Order['billingAddress'], netAmount: 1000, subtotalAmount: 1000, totalAmount: 1000, lines: [] }),
    order(25, c[4]!, oneTime, { subscription: subs[1], discount: d[2], netAmount: 10, totalAmount: 10 }),
  ];
  const theirOrder = order(26, theirCustomer, theirs, { organization: em.getReference(Organization, otherOrgId) });
  await em.flush();
  ids.customers.push(...c.map((x) => x.id));
  ids.subscriptions.push(...subs.map((x) => x.id));
  ids.orders.push(...orders.map((x) => x.id));
  foreign = { customer: theirCustomer.id, order: theirOrder.id, subscription: theirSub.id };
}

beforeAll(async () => {
  srv = await startTestServer();
  s = await seller(srv.url, SCOPES);
  other = await seller(srv.url, SCOPES);
  await seed(s.organization.id, s.token, other.organization.id, other.token);
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

const plain = <T>(v: T): T => JSON.parse(JSON.stringify(v));
const pageOf = (qs: string) => ({ limit: Number(/limit=(\d+)/.exec(qs)?.[1] ?? 10), page: Number(/page=(\d+)/.exec(qs)?.[1] ?? 1) });
/** `?a=1&a=2&b=x` → `{a: ['1', '2'], b: ['x']}`. */
function lists(qs: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(qs)) (out[k] ??= []).push(v);
  return out;
}

describe('customers read by PostgreSQL', () => {
  /** What the ORM route made of the live customers: its filters, sorting and page. */
  async function expected(qs: string, metadata: Record<string, string[]> = {}) {
    const q = lists(qs);
    const { limit, page } = pageOf(qs);
    const and: Record<string, unknown>[] = [{ organization: s.organization.id, deletedAt: null }];
    if (q.email) and.push({ email: q.email[0]!.trim().toLowerCase() });
    if (q.query) {
      const like = containsPattern(q.query[0]!);
      and.push({ $or: [{ email: { $ilike: like } }, { name: { $ilike: like } }, { externalId: { $ilike: like } }] });
    }
    const em = srv.deps.orm.em.fork();
    let rows = await em.find(Customer, { $and: and });
    rows = rows.filter((c) => Object.entries(metadata).every(([k, vs]) => k in c.metadata && vs.includes(String(c.metadata[k]))));
    const sorting = q.sorting ?? ['-created_at'];
    const key = { created_at: (c: Customer) => c.createdAt.getTime(), email: (c: Customer) => c.email, name: (c: Customer) => c.name } as Record<string, (c: Customer) => unknown>;
    rows.sort((a, b) => {
      for (const sk of sorting) {
        const dir = sk.startsWith('-') ? -1 : 1;
        const [x, y] = [key[sk.replace(/^-/, '')]!(a), key[sk.replace(/^-/, '')]!(b)];
        if (x === y) continue;
        if (x === null) return dir; // nulls last ascending, first descending (PostgreSQL)
        if (y === null) return -dir;
        return ((x as string) < (y as string) ? -1 : 1) * dir;
      }
      return a.id < b.id ? -1 : 1;
    });
    return { items: plain(rows.slice((page - 1) * limit, page * limit).map(serializeCustomer)), pagination: { total_count: rows.length, max_page: Math.ceil(rows.length / limit) } };
  }

  it('answers each live customer by id and by external id exactly as serializeCustomer; deleted and foreign ones are 404', async () => {
    const em = srv.deps.orm.em.fork();
    const rows = await em.find(Customer, { id: { $in: ids.customers } });
    for (const c of rows) {
      const r = await call(s.token, `/v1/customers/${c.id}`);
      if (c.deletedAt) {
        expect(r.status).toBe(404);
        expect(r.body.error).toBe('ResourceNotFound');
        continue;
      }
      expect(r.status).toBe(200);
      expect(r.type).toBe('application/json; charset=utf-8');
      expect(r.body).toEqual(plain(serializeCustomer(c)));
      if (c.externalId) expect((await call(s.token, `/v1/customers/external/${encodeURIComponent(c.externalId)}`)).body).toEqual(plain(serializeCustomer(c)));
    }
    expect(rows.find((c) => c.email === 'bare@example.com')!.billingAddress).toEqual({ country: 'US' });
    expect((await call(s.token, `/v1/customers/${foreign.customer}`)).status).toBe(404);
    expect((await call(s.token, `/v1/customers/external/ext-nope`)).status).toBe(404);
    expect((await call(s.token, `/v1/customers/${randomUUID()}`)).status).toBe(404);
  });

  it.each([
    '',
    '?limit=2&page=2',
    '?limit=2&page=9',
    '?sorting=name',
    '?sorting=-name&sorting=email',
    '?sorting=email',
    '?sorting=created_at',
    '?email=%20ADA@example.com',
    '?query=EXAMPLE&sorting=email',
    '?query=_%25',
    '?query=100%25',
  ])('lists %s exactly as the ORM path', async (qs) => {
    const r = await call(s.token, `/v1/customers/${qs}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual(await expected(qs));
  });

  it('filters by metadata (values as text, keys combined) and never lists another organization’s customers', async () => {
    const gold = await call(s.token, '/v1/customers/?metadata[tier]=gold&sorting=email');
    expect(gold.body.items.map((c: { email: string }) => c.email)).toEqual(['ada@example.com', 'zed+x@example.com']);
    expect(gold.body).toEqual(await expected('?sorting=email', { tier: ['gold'] }));
    const both = await call(s.token, '/v1/customers/?metadata[tier]=gold&metadata[seats]=5&metadata[seats]=7');
    expect(both.body).toEqual(await expected('', { tier: ['gold'], seats: ['5', '7'] }));
    expect(both.body.items).toHaveLength(1);
    const bool = await call(s.token, '/v1/customers/?metadata[vip]=false');
    expect(bool.body).toEqual(await expected('', { vip: ['false'] }));
    const foreignOrg = await call(s.token, `/v1/customers/?organization_id=${other.organization.id}`);
    expect(foreignOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });
});

describe('orders read by PostgreSQL', () => {
  async function expected(qs: string) {
    const q = lists(qs);
    const { limit, page } = pageOf(qs);
    const query: OrderListQuery = { page, limit, sorting: q.sorting ?? ['-created_at'], product_id: q.product_id, product_billing_type: q.product_billing_type, product_price_type: q.product_price_type, discount_id: q.discount_id, customer_id: q.customer_id, checkout_id: q.checkout_id };
    const [items, total] = await listOrders(srv.deps.orm.em.fork(), { organization: { $in: [s.organization.id] } }, query, ORDER_POPULATE);
    return { items: plain(items.map((o) => serializeOrder(o))), pagination: { total_count: total, max_page: Math.ceil(total / limit) } };
  }

  it('answers each order by id exactly as serializeOrder; another organization’s order is 404', async () => {
    const em = srv.deps.orm.em.fork();
    const rows = await em.find(Order, { id: { $in: ids.orders } }, { populate: ORDER_POPULATE });
    expect(rows).toHaveLength(6);
    for (const o of rows) {
      const r = await call(s.token, `/v1/orders/${o.id}`);
      expect(r.status).toBe(200);
      expect(r.type).toBe('application/json; charset=utf-8');
      expect(r.body).toEqual(plain(serializeOrder(o)));
    }
    const refunded = rows.find((o) => o.status === 'refunded')!;
    expect(serializeOrder(refunded).product_price.is_archived).toBe(true);
    expect(serializeOrder(refunded).customer.deleted_at).not.toBeNull();
    expect(serializeOrder(rows.find((o) => o.lines?.length)!).items).toHaveLength(2);
    const foreignOrder = await call(s.token, `/v1/orders/${foreign.order}`);
    expect(foreignOrder.status).toBe(404);
    expect(foreignOrder.body.error).toBe('ResourceNotFound');
    expect((await call(other.token, `/v1/orders/${ids.orders[0]}`)).status).toBe(404);
  });

  const cases = () => [
    '',
    '?limit=2&page=2',
    '?limit=4&page=3',
    ...['created_at', 'amount', 'net_amount', 'customer', 'product', 'discount', 'subscription'].flatMap((k) => [`?sorting=${k}`, `?sorting=-${k}`]),
    '?sorting=customer&sorting=-amount',
    `?product_id=${ids.products[0]}&product_id=${ids.products[2]}`,
    '?product_billing_type=one_time',
    '?product_billing_type=recurring&sorting=amount',
    '?product_price_type=one_time&product_billing_type=recurring',
    '?product_price_type=recurring&product_price_type=one_time',
    `?discount_id=${ids.discounts[0]}&discount_id=${ids.discounts[1]}`,
    `?customer_id=${ids.customers[0]}`,
    `?checkout_id=${randomUUID()}`,
    `?customer_id=${foreign.customer}`,
  ];
  it('lists under every filter and sorting exactly as the ORM path', async () => {
    for (const qs of cases()) {
      const r = await call(s.token, `/v1/orders/${qs}`);
      expect(r.status, qs).toBe(200);
      expect(r.body, qs).toEqual(await expected(qs));
    }
    const all = await call(s.token, '/v1/orders/');
    expect(all.body.pagination).toEqual({ total_count: 6, max_page: 1 });
    const foreignOrg = await call(s.token, `/v1/orders/?organization_id=${other.organization.id}`);
    expect(foreignOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });
});

describe('subscriptions read by PostgreSQL', () => {
  async function expected(qs: string) {
    const q = lists(qs);
    const { limit, page } = pageOf(qs);
    const active = q.active ? ['true', '1'].includes(q.active[0]!) : undefined;
    const query: SubscriptionListQuery = { page, limit, sorting: q.sorting ?? ['-started_at'], product_id: q.product_id, customer_id: q.customer_id, discount_id: q.discount_id, active };
    const [items, total] = await listSubscriptions(srv.deps.orm.em.fork(), { organization: { $in: [s.organization.id] } }, query, SUBSCRIPTION_POPULATE);
    return { items: plain(items.map(serializeSubscription)), pagination: { total_count: total, max_page: Math.ceil(total / limit) } };
  }

  it('answers each subscription by id exactly as serializeSubscription; another organization’s is 404', async () => {
    const em = srv.deps.orm.em.fork();
    const rows = await em.find(Subscription, { id: { $in: ids.subscriptions } }, { populate: SUBSCRIPTION_POPULATE });
    expect(rows.map((x) => x.status).sort()).toEqual(['active', 'canceled', 'incomplete', 'past_due', 'trialing']);
    for (const x of rows) {
      const r = await call(s.token, `/v1/subscriptions/${x.id}`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual(plain(serializeSubscription(x)));
    }
    expect((await call(s.token, `/v1/subscriptions/${foreign.subscription}`)).status).toBe(404);
    expect((await call(s.token, `/v1/subscriptions/${randomUUID()}`)).body.error).toBe('ResourceNotFound');
  });

  it('lists under every filter and sorting exactly as the ORM path', async () => {
    const cases = [
      '',
      '?limit=2&page=2',
      ...['customer', 'status', 'started_at', 'current_period_end', 'amount', 'product', 'discount'].flatMap((k) => [`?sorting=${k}`, `?sorting=-${k}`]),
      '?sorting=status&sorting=-amount',
      `?product_id=${ids.products[1]}`,
      `?customer_id=${ids.customers[0]}&customer_id=${ids.customers[3]}`,
      `?discount_id=${ids.discounts[0]}&discount_id=${ids.discounts[2]}`,
      '?active=true',
      '?active=0&sorting=customer',
      `?product_id=${ids.products[1]}&active=1&limit=1`,
    ];
    for (const qs of cases) {
      const r = await call(s.token, `/v1/subscriptions/${qs}`);
      expect(r.status, qs).toBe(200);
      expect(r.body, qs).toEqual(await expected(qs));
    }
    expect((await call(s.token, '/v1/subscriptions/?active=false')).body.pagination.total_count).toBe(3);
    const foreignOrg = await call(s.token, `/v1/subscriptions/?organization_id=${other.organization.id}`);
    expect(foreignOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });
});
