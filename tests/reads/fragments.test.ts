/**
 * Orders, subscriptions, products and benefits lists and by-id reads, and customers lists, answer items' JSON kept by
 * version, the row versions of every row an item is built from (`kit/read-fragments.ts`). After every kind of write that changes an embedded
 * record (customer, product, price, subscription) or the item itself, from this server, a second API server on the same database, or another process
 * (psql), the list or record answered over HTTP must be byte for byte the body the full statement builds in a
 * transaction (which never splices) on the same rows, and show the write.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { routes as orderRoutes } from '../../api/src/modules/orders/routes.ts';
import { routes as subscriptionRoutes } from '../../api/src/modules/subscriptions/routes.ts';
import type { RouteSpec } from '../../api/src/kit/routes.ts';
import { listOrdersJson, orderJson } from '../../api/src/modules/orders/read-sql.ts';
import { listSubscriptionsJson, subscriptionJson } from '../../api/src/modules/subscriptions/read-sql.ts';
import { productRoutes } from '../../api/src/modules/products/routes.ts';
import { listProductsJson, productJson } from '../../api/src/modules/products/read-sql.ts';
import { routes as customerRoutes } from '../../api/src/modules/customers/routes.ts';
import { listCustomersJson } from '../../api/src/modules/customers/read-sql.ts';
import { routes as benefitRoutes } from '../../api/src/modules/benefits/routes.ts';
import { benefitJson, listBenefitsJson } from '../../api/src/modules/benefits/read-sql.ts';
import type { EntityManager } from '../../api/src/kit/db.ts';

let srv: TestServer;
let second: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
const SCOPES = ['benefits:read', 'benefits:write', 'products:read', 'products:write', 'customers:read', 'customers:write', 'orders:read', 'subscriptions:read', 'subscriptions:write'];
const ids = { customers: [] as string[], products: [] as { id: string; prices: { id: string }[] }[], subscriptions: [] as string[], orders: [] as string[], benefits: [] as string[] };

async function call(base: string, path: string, init: { method?: string; body?: unknown } = {}) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${s.token}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
    body: init.body ? JSON.stringify(init.body) : undefined,
  });
  return { status: res.status, text: await res.text() };
}

const at = (n: number) => new Date(Date.UTC(2026, 0, 1, 12, 0, n, (n * 7) % 1000));

async function seed() {
  const product = async (body: Record<string, unknown>) => {
    const r = await call(srv.url, '/v1/products/', { method: 'POST', body });
    expect(r.status, r.text).toBe(201);
    return JSON.parse(r.text) as { id: string; prices: { id: string }[] };
  };
  const oneTime = await product({ name: 'Book', prices: [{ amount_type: 'fixed', price_amount: 1999, price_currency: 'EUR' }], metadata: { kind: 'book' } });
  const monthly = await product({ name: 'Monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900 }] });
  ids.products.push(oneTime, monthly);
  for (const body of [
    { type: 'custom', description: 'Priority support', properties: { note: 'Write to us ✓' } },
    { type: 'license_keys', description: 'License', properties: { prefix: 'frg', limit_usage: 3 } },
    { type: 'custom', description: 'Sticker', properties: { note: null } },
  ]) {
    const r = await call(srv.url, '/v1/benefits/', { method: 'POST', body });
    expect(r.status, r.text).toBe(201);
    ids.benefits.push((JSON.parse(r.text) as { id: string }).id);
  }
  const em = srv.deps.orm.em.fork();
  const org = em.getReference(Organization, s.organization.id);
  const customer = (n: number, email: string, extra: Partial<Customer> = {}) =>
    em.create(Customer, { id: randomUUID(), createdAt: at(n), organization: org, email, emailVerified: false, name: null, externalId: null, billingAddress: null, taxId: null, metadata: {}, userId: null, deletedAt: null, processorCustomerId: null, oauthAccounts: null, ...extra });
  const c = [customer(1, 'ada@example.com', { name: 'Ada', metadata: { tier: 'gold' } }), customer(2, 'bob@example.com'), customer(3, 'cy@example.com', { name: 'Cy' })];
  const sub = (n: number, cust: Customer, extra: Partial<Subscription> = {}) =>
    em.create(Subscription, { id: randomUUID(), createdAt: at(n), organization: org, customer: cust, product: em.getReference(Product, monthly.id), price: em.getReference(ProductPrice, monthly.prices[0]!.id), discount: null, checkout: null, amount: 900, currency: 'usd', recurringInterval: 'month', status: 'active', currentPeriodStart: at(n + 1), currentPeriodEnd: at(n + 2), cancelAtPeriodEnd: false, canceledAt: null, startedAt: at(n), endsAt: null, endedAt: null, customerCancellationReason: null, customerCancellationComment: null, paymentMethod: null, pendingProrationAmount: 0, trialStart: null, trialEnd: null, metadata: {}, ...extra });
  const subs = [sub(10, c[0]!), sub(11, c[1]!, { metadata: { seat: 'b' } })];
  const order = (n: number, cust: Customer, prod: { id: string; prices: { id: string }[] }, extra: Partial<Order> = {}) =>
    em.create(Order, { id: randomUUID(), createdAt: at(n), organization: org, customer: cust, product: em.getReference(Product, prod.id), productPrice: em.getReference(ProductPrice, prod.prices[0]!.id), discount: null, subscription: null, checkout: null, status: 'paid', billingReason: 'purchase', subtotalAmount: 1999, discountAmount: 0, netAmount: 1999, taxAmount: 0, totalAmount: 1999, refundedAmount: 0, refundedTaxAmount: 0, currency: 'eur', billingAddress: null, customFieldData: {}, metadata: {}, processorChargeId: null, lines: null, ...extra });
  const orders = [
    order(20, c[0]!, oneTime, { metadata: { source: 'web' } }),
    order(21, c[0]!, monthly, { billingReason: 'subscription_create', subscription: subs[0], currency: 'usd', netAmount: 900, subtotalAmount: 900, totalAmount: 900 }),
    order(22, c[1]!, monthly, { billingReason: 'subscription_cycle', subscription: subs[1], currency: 'usd', lines: [{ id: randomUUID(), label: 'Monthly', amount: 900, discountAmount: 0, taxAmount: 0, proration: false, productPriceId: monthly.prices[0]!.id }] }),
    order(23, c[2]!, oneTime),
  ];
  await em.flush();
  ids.customers.push(...c.map((x) => x.id));
  ids.subscriptions.push(...subs.map((x) => x.id));
  ids.orders.push(...orders.map((x) => x.id));
}

beforeAll(async () => {
  srv = await startTestServer();
  second = await startTestServer({ worker: false, databaseUrl: srv.databaseUrl });
  s = await seller(srv.url, SCOPES);
  await seed();
}, 120_000);

afterAll(async () => {
  await second?.close();
  await srv?.close();
});

const listRoute = (list: RouteSpec[], path: string) => list.find((r) => r.method === 'get' && r.path === path)!;

/** The full statement's body for the same list: the handler inside a transaction (never spliced). */
async function fullBody(path: string, query: Record<string, unknown>): Promise<string> {
  const spec = listRoute(
    path === '/v1/orders/'
      ? orderRoutes
      : path === '/v1/products/'
        ? productRoutes
        : path === '/v1/customers/'
          ? customerRoutes
          : path === '/v1/benefits/'
            ? (benefitRoutes as RouteSpec[])
            : subscriptionRoutes,
    path,
  );
  const parsed = spec.query!.parse(query) as any;
  const em = srv.deps.orm.em.fork() as EntityManager;
  const orgIds = [s.organization.id];
  const out = await em.transactional((tx) =>
    path === '/v1/orders/'
      ? listOrdersJson(tx as EntityManager, orgIds, parsed, parsed)
      : path === '/v1/products/'
        ? listProductsJson(tx as EntityManager, { organizationIds: orgIds }, parsed.sorting, parsed)
        : path === '/v1/customers/'
          ? listCustomersJson(tx as EntityManager, { organizationIds: orgIds, metadata: [] }, parsed.sorting, parsed)
          : path === '/v1/benefits/'
            ? listBenefitsJson(tx as EntityManager, { organizationIds: orgIds, types: parsed.type, query: parsed.query }, parsed.sorting, parsed)
            : listSubscriptionsJson(tx as EntityManager, { organizationIds: orgIds, ...parsed }, parsed.sorting, parsed),
  );
  return out.text;
}

const QUERIES: [string, Record<string, string | string[]>][] = [
  ['', {}],
  ['?limit=2&page=2', { limit: '2', page: '2' }],
  ['?sorting=customer', { sorting: ['customer'] }],
  ['?limit=1&page=99', { limit: '1', page: '99' }],
];

/** The full statement's body of one record (inside a transaction: never kept). */
async function fullOne(kind: 'orders' | 'subscriptions' | 'products' | 'benefits', id: string): Promise<string | null> {
  const em = srv.deps.orm.em.fork() as EntityManager;
  const orgIds = [s.organization.id];
  const read = kind === 'orders' ? orderJson : kind === 'products' ? productJson : kind === 'benefits' ? benefitJson : subscriptionJson;
  const out = await em.transactional((tx) => read(tx as EntityManager, orgIds, id));
  return out?.text ?? null;
}

/**
 * Every list over HTTP (twice: the second read splices kept texts only) equals the full statement's
 * body; so does every order, subscription and product read by id (the first read after a write builds it, the
 * second writes the kept text).
 */
async function expectSpliced(base: string = srv.url) {
  for (const kind of ['orders', 'subscriptions', 'products', 'benefits'] as const) {
    for (const id of kind === 'products' ? ids.products.map((p) => p.id) : ids[kind]) {
      const full = await fullOne(kind, id);
      expect(full, `${kind} ${id}`).not.toBeNull();
      for (let n = 0; n < 2; n++) {
        const r = await call(base, `/v1/${kind}/${id}`);
        expect(r.status, r.text).toBe(200);
        expect(r.text, `/v1/${kind}/${id}`).toBe(full);
      }
    }
    expect((await call(base, `/v1/${kind}/${randomUUID()}`)).status).toBe(404);
  }
  for (const path of ['/v1/orders/', '/v1/subscriptions/', '/v1/products/', '/v1/customers/', '/v1/benefits/']) {
    for (let [qs, query] of QUERIES) {
      // Products and customers are not sorted by customer: by name; benefits by description.
      if ((path === '/v1/products/' || path === '/v1/customers/') && query.sorting) [qs, query] = ['?sorting=-name', { sorting: ['-name'] }];
      if (path === '/v1/benefits/' && query.sorting) [qs, query] = ['?sorting=-description', { sorting: ['-description'] }];
      const full = await fullBody(path, query);
      for (let n = 0; n < 2; n++) {
        const r = await call(base, `${path}${qs}`);
        expect(r.status, r.text).toBe(200);
        expect(r.text, `${path}${qs}`).toBe(full);
      }
    }
  }
}

const orders = async (base = srv.url) => (JSON.parse((await call(base, '/v1/orders/?limit=100')).text) as { items: any[] }).items;
const subscriptions = async (base = srv.url) => (JSON.parse((await call(base, '/v1/subscriptions/?limit=100')).text) as { items: any[] }).items;

describe('orders and subscriptions lists with kept embedded records', () => {
  it('answer the full statement bytes on a cold and a warm cache', async () => {
    await expectSpliced();
    await expectSpliced(second.url);
    expect((await orders()).map((o) => o.id).sort()).toEqual([...ids.orders].sort());
  });

  it('show a customer update and delete at once, byte for byte', async () => {
    await expectSpliced();
    const id = ids.customers[0]!;
    const r = await call(srv.url, `/v1/customers/${id}`, { method: 'PATCH', body: { name: 'Ada Lövelace ✓', email: 'ada.l@example.com', metadata: { tier: 'platinum' } } });
    expect(r.status, r.text).toBe(200);
    const mine = (await orders()).filter((o) => o.customer_id === id);
    expect(mine).toHaveLength(2);
    expect(mine.map((o) => [o.customer.name, o.customer.email, o.customer.metadata, o.user.public_name])).toEqual(mine.map(() => ['Ada Lövelace ✓', 'ada.l@example.com', { tier: 'platinum' }, 'Ada Lövelace ✓']));
    await expectSpliced();
    expect((await call(srv.url, `/v1/customers/${ids.customers[2]}`, { method: 'DELETE' })).status).toBe(204);
    const gone = (await orders()).filter((o) => o.customer_id === ids.customers[2]);
    expect(gone).toHaveLength(1);
    expect(gone[0].customer.deleted_at).toEqual(expect.any(String));
    await expectSpliced();
  });

  it('show a product update, archive and price change at once, byte for byte', async () => {
    await expectSpliced();
    const monthly = ids.products[1]!;
    expect((await call(srv.url, `/v1/products/${monthly.id}`, { method: 'PATCH', body: { name: 'Monthly Pro', description: 'Now with more' } })).status).toBe(200);
    let mine = (await subscriptions()).filter((x) => x.product_id === monthly.id);
    expect(mine.map((x) => x.product.name)).toEqual(['Monthly Pro', 'Monthly Pro']);
    await expectSpliced();
    expect((await call(srv.url, `/v1/products/${monthly.id}`, { method: 'PATCH', body: { prices: [{ amount_type: 'fixed', price_amount: 1200 }] } })).status).toBe(200);
    mine = (await subscriptions()).filter((x) => x.product_id === monthly.id);
    expect(mine.map((x) => [x.price.is_archived, x.product.prices.map((p: { price_amount: number }) => p.price_amount)])).toEqual([[true, [1200]], [true, [1200]]]);
    await expectSpliced();
    expect((await call(srv.url, `/v1/products/${monthly.id}`, { method: 'PATCH', body: { is_archived: true } })).status).toBe(200);
    const archived = (await orders()).filter((o) => o.product_id === monthly.id);
    expect(archived.map((o) => o.product.is_archived)).toEqual([true, true]);
    await expectSpliced();
  });

  it('show a subscription cancel, renewal and revoke, a refund and an order update at once, byte for byte', async () => {
    await expectSpliced();
    const [sub0, sub1] = ids.subscriptions as [string, string];
    // The cancel's write on the row (through the API it is a workflow's, which then ends a past-due
    // period at its own time: a later write the comparison would race with).
    await srv.deps.orm.em.fork().nativeUpdate(Subscription, { id: sub0 }, { cancelAtPeriodEnd: true, canceledAt: at(90) });
    const canceled = (await orders()).filter((o) => o.subscription_id === sub0);
    expect(canceled.map((o) => o.subscription.cancel_at_period_end)).toEqual([true]);
    await expectSpliced();
    // The renewal activity's write: the next period on the row.
    await srv.deps.orm.em.fork().nativeUpdate(Subscription, { id: sub1 }, { currentPeriodStart: at(100), currentPeriodEnd: at(200) });
    expect((await orders()).filter((o) => o.subscription_id === sub1).map((o) => o.subscription.current_period_end)).toEqual([at(200).toISOString()]);
    await expectSpliced();
    // Revoked: ended now.
    await srv.deps.orm.em.fork().nativeUpdate(Subscription, { id: sub1 }, { status: 'canceled', canceledAt: at(300), endedAt: at(300), endsAt: at(300) });
    expect((await subscriptions()).filter((x) => x.id === sub1).map((x) => [x.status, x.ended_at])).toEqual([['canceled', at(300).toISOString()]]);
    await expectSpliced();
    // A refund and a metadata update of an order.
    await srv.deps.orm.em.fork().nativeUpdate(Order, { id: ids.orders[0]! }, { status: 'partially_refunded', refundedAmount: 500, metadata: { source: 'web', note: 'refunded' } });
    expect((await orders()).filter((o) => o.id === ids.orders[0]).map((o) => [o.status, o.refunded_amount, o.metadata.note])).toEqual([['partially_refunded', 500, 'refunded']]);
    await expectSpliced();
  });

  it('show a product and a price changed by another process (their read model rewritten by the triggers) at once, byte for byte', async () => {
    await expectSpliced();
    const order = (await orders())[0];
    const psql = (sql: string) => execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', sql]);
    psql(`update products set name = 'Renamed in psql' where id = '${order.product_id}'`);
    const renamed = (await orders()).filter((o) => o.product_id === order.product_id);
    expect(renamed.map((o) => o.product.name)).toEqual(renamed.map(() => 'Renamed in psql'));
    expect((await subscriptions()).filter((x) => x.product_id === order.product_id).every((x) => x.product.name === 'Renamed in psql')).toBe(true);
    await expectSpliced();
    psql(`update product_prices set modified_at = '2031-01-02T03:04:05.678Z' where id = '${order.product_price_id}'`);
    const repriced = (await orders()).filter((o) => o.product_price_id === order.product_price_id);
    expect(repriced.map((o) => o.product_price.modified_at)).toEqual(repriced.map(() => '2031-01-02T03:04:05.678Z'));
    await expectSpliced();
    await expectSpliced(second.url);
  });

  it('show a benefit updated through the API, by another process and deleted at once, byte for byte', async () => {
    await expectSpliced();
    await expectSpliced(second.url);
    const benefits = async (base = srv.url) => (JSON.parse((await call(base, '/v1/benefits/?limit=100')).text) as { items: any[] }).items;
    const [support, license, sticker] = ids.benefits as [string, string, string];
    const r = await call(second.url, `/v1/benefits/${support}`, { method: 'PATCH', body: { type: 'custom', description: 'Priority support, 24 h' } });
    expect(r.status, r.text).toBe(200);
    expect((await benefits()).filter((b) => b.id === support).map((b) => b.description)).toEqual(['Priority support, 24 h']);
    expect(JSON.parse((await call(srv.url, `/v1/benefits/${support}`)).text).description).toBe('Priority support, 24 h');
    await expectSpliced();
    execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', `update benefits set properties = properties || '{"limit_usage": 9}' where id = '${license}'`]);
    expect((await benefits(second.url)).filter((b) => b.id === license).map((b) => b.properties.limit_usage)).toEqual([9]);
    expect(JSON.parse((await call(srv.url, `/v1/benefits/${license}`)).text).properties.limit_usage).toBe(9);
    await expectSpliced();
    await expectSpliced(second.url);
    expect((await call(srv.url, `/v1/benefits/${sticker}`, { method: 'DELETE' })).status).toBe(204);
    expect((await benefits(second.url)).map((b) => b.id)).not.toContain(sticker);
    expect((await call(second.url, `/v1/benefits/${sticker}`)).status).toBe(404);
    ids.benefits.pop();
    await expectSpliced();
    await expectSpliced(second.url);
  });

  it('shows a write from another API server and from another process on the next read', async () => {
    await expectSpliced();
    await expectSpliced(second.url);
    const id = ids.customers[1]!;
    const r = await call(second.url, `/v1/customers/${id}`, { method: 'PATCH', body: { name: 'Bob from the second server' } });
    expect(r.status, r.text).toBe(200);
    expect((await orders()).filter((o) => o.customer_id === id).map((o) => o.customer.name)).toEqual(['Bob from the second server']);
    expect((await subscriptions()).filter((x) => x.customer_id === id).map((x) => x.user.public_name)).toEqual(['Bob from the second server']);
    await expectSpliced();
    execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', `update customers set name = 'Bob from psql' where id = '${id}'`]);
    expect((await orders()).filter((o) => o.customer_id === id).map((o) => o.customer.name)).toEqual(['Bob from psql']);
    expect((await orders(second.url)).filter((o) => o.customer_id === id).map((o) => o.customer.name)).toEqual(['Bob from psql']);
    execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', `update subscriptions set metadata = '{"seat": "psql"}' where id = '${ids.subscriptions[1]}'`]);
    expect((await orders()).filter((o) => o.subscription_id === ids.subscriptions[1]).map((o) => o.subscription.metadata)).toEqual([{ seat: 'psql' }]);
    await expectSpliced();
    await expectSpliced(second.url);
    // Rows inserted and deleted by another process: every list's total_count follows (the unfiltered lists' kept counts).
    const copy = (table: string) =>
      `insert into ${table} select (jsonb_populate_record(null::${table}, to_jsonb(t) || jsonb_build_object('id', gen_random_uuid(), 'checkout_id', null))).* from ${table} t where t.organization_id = '${s.organization.id}'`;
    execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc', `${copy('orders')}; ${copy('subscriptions')}`]);
    expect(JSON.parse((await call(srv.url, '/v1/orders/?limit=1')).text).pagination.total_count).toBe(8);
    await expectSpliced();
    const seeded = (list: string[]) => `array[${list.map((id) => `'${id}'::uuid`).join(', ')}]`;
    execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-qc',
      `delete from orders where id <> all(${seeded(ids.orders)}); delete from subscriptions where id <> all(${seeded(ids.subscriptions)})`]);
    expect(JSON.parse((await call(srv.url, '/v1/subscriptions/?limit=1')).text).pagination.total_count).toBe(2);
    await expectSpliced();
    await expectSpliced(second.url);
  });
});
