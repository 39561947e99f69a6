/**
 * GET /v1/metrics through `@polar-sh/sdk` 0.29.3 over a seeded dataset with known amounts and dates.
 * Every expected figure below is worked out by hand from the seed (see the table in `beforeAll`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RFCDate } from '@polar-sh/sdk/types/rfcdate.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createProduct, sellerWithSdk } from '../catalogue/helpers-c.ts';
import { insertCustomer } from '../catalogue/helpers-b.ts';
import { insertOrder, insertSubscription, type SeedRefs } from './seed.ts';

const SCOPES = ['metrics:read', 'products:read', 'products:write'];
type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;

let srv: TestServer;
let a: Seller;
let b: Seller;
const ids: Record<string, string> = {};

const ZERO = {
  orders: 0,
  revenue: 0,
  cumulativeRevenue: 0,
  averageOrderValue: 0,
  oneTimeProducts: 0,
  oneTimeProductsRevenue: 0,
  newSubscriptions: 0,
  newSubscriptionsRevenue: 0,
  renewedSubscriptions: 0,
  renewedSubscriptionsRevenue: 0,
  activeSubscriptions: 0,
  monthlyRecurringRevenue: 0,
};
const period = (timestamp: string, figures: Partial<typeof ZERO>) => ({ timestamp: new Date(timestamp), ...ZERO, ...figures });

async function refsFor(s: Seller, product: { id: string; prices: { id: string }[] }, customerId: string): Promise<SeedRefs> {
  return { organizationId: s.organization.id, customerId, productId: product.id, priceId: product.prices[0]!.id };
}

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv, SCOPES);
  b = await sellerWithSdk(srv, SCOPES);
  const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];
  const oneTime = await createProduct(srv.url, a.token, { name: 'E-book', prices: fixed(1000) });
  const monthly = await createProduct(srv.url, a.token, { name: 'Pro monthly', recurring_interval: 'month', prices: fixed(2000) });
  const yearly = await createProduct(srv.url, a.token, { name: 'Pro yearly', recurring_interval: 'year', prices: fixed(12500) });
  const c1 = await insertCustomer(srv, a.organization.id);
  const c2 = await insertCustomer(srv, a.organization.id);
  Object.assign(ids, { oneTime: oneTime.id, monthly: monthly.id, yearly: yearly.id, c1: c1.id, c2: c2.id });

  // Organization A, 2025 (UTC):
  //   Jan 10 10:00  one-time order, C1, net 1000 (+200 tax: tax is not revenue)
  //   Jan 15 12:00  S1 monthly 2000 starts (C1); its create order net 2000
  //   Jan 20 23:30  one-time order, C2, net 1501   (Jan 21 08:30 in Tokyo)
  //   Feb  5        one-time order, C1, net 999, still pending: never counted
  //   Feb 10 09:00  S2 yearly 12500 starts (C2); its create order net 12500; S2 ends Mar 5
  //   Feb 15 12:00  S1 renewal order net 2000
  //   Mar 15 12:00  S1 renewal order net 2000
  const r1 = await refsFor(a, oneTime, c1.id);
  const r1c2 = await refsFor(a, oneTime, c2.id);
  const rMonthly = await refsFor(a, monthly, c1.id);
  const rYearly = await refsFor(a, yearly, c2.id);
  await insertOrder(srv, r1, { net: 1000, tax: 200, createdAt: '2025-01-10T10:00:00Z' });
  const s1 = await insertSubscription(srv, rMonthly, { amount: 2000, interval: 'month', startedAt: '2025-01-15T12:00:00Z' });
  await insertOrder(srv, rMonthly, { net: 2000, createdAt: '2025-01-15T12:00:00Z', subscriptionId: s1, billingReason: 'subscription_create' });
  await insertOrder(srv, r1c2, { net: 1501, createdAt: '2025-01-20T23:30:00Z' });
  await insertOrder(srv, r1, { net: 999, createdAt: '2025-02-05T08:00:00Z', status: 'pending' });
  const s2 = await insertSubscription(srv, rYearly, {
    amount: 12500, interval: 'year', startedAt: '2025-02-10T09:00:00Z', endedAt: '2025-03-05T00:00:00Z',
  });
  await insertOrder(srv, rYearly, { net: 12500, createdAt: '2025-02-10T09:00:00Z', subscriptionId: s2, billingReason: 'subscription_create' });
  await insertOrder(srv, rMonthly, { net: 2000, createdAt: '2025-02-15T12:00:00Z', subscriptionId: s1 });
  await insertOrder(srv, rMonthly, { net: 2000, createdAt: '2025-03-15T12:00:00Z', subscriptionId: s1 });

  // Organization B: one order and one subscription in January that A must never see.
  const bProduct = await createProduct(srv.url, b.token, { name: 'B monthly', recurring_interval: 'month', prices: fixed(7777) });
  const bCustomer = await insertCustomer(srv, b.organization.id);
  const rb = await refsFor(b, bProduct, bCustomer.id);
  const sb = await insertSubscription(srv, rb, { amount: 7777, interval: 'month', startedAt: '2025-01-05T00:00:00Z' });
  await insertOrder(srv, rb, { net: 7777, createdAt: '2025-01-05T00:00:00Z', subscriptionId: sb, billingReason: 'subscription_create' });
  ids.bOrg = b.organization.id;
});
afterAll(async () => {
  await srv?.close();
});

const get = (s: Seller, req: Omit<Parameters<Seller['polar']['metrics']['get']>[0], 'startDate' | 'endDate'> & { start: string; end: string }) => {
  const { start, end, ...rest } = req;
  return s.polar.metrics.get({ startDate: new RFCDate(start), endDate: new RFCDate(end), ...rest });
};

describe('metrics per month', () => {
  it('gives the twelve figures of each month, by hand from the seed', async () => {
    const res = await get(a, { start: '2025-01-01', end: '2025-03-31', interval: 'month' });
    expect(res.periods).toEqual([
      period('2025-01-01T00:00:00Z', {
        orders: 3, revenue: 4501, cumulativeRevenue: 4501, averageOrderValue: 1501, // ceil(4501 / 3)
        oneTimeProducts: 2, oneTimeProductsRevenue: 2501,
        newSubscriptions: 1, newSubscriptionsRevenue: 2000,
        activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
      period('2025-02-01T00:00:00Z', {
        orders: 2, revenue: 14500, cumulativeRevenue: 19001, averageOrderValue: 7250,
        newSubscriptions: 1, newSubscriptionsRevenue: 12500,
        renewedSubscriptions: 1, renewedSubscriptionsRevenue: 2000,
        activeSubscriptions: 2, monthlyRecurringRevenue: 3042, // 2000 + round(12500 / 12)
      }),
      period('2025-03-01T00:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 21001, averageOrderValue: 2000,
        renewedSubscriptions: 1, renewedSubscriptionsRevenue: 2000,
        activeSubscriptions: 2, monthlyRecurringRevenue: 3042, // S2 ended on Mar 5: active during March
      }),
    ]);
    expect(Object.keys(res.metrics)).toHaveLength(12);
    expect(res.metrics.revenue).toEqual({ slug: 'revenue', displayName: 'Revenue', type: 'currency' });
    expect(res.metrics.orders).toEqual({ slug: 'orders', displayName: 'Orders', type: 'scalar' });
    expect(res.metrics.monthlyRecurringRevenue.type).toBe('currency');
    expect(res.metrics.activeSubscriptions.type).toBe('scalar');
  });

  it('an ended subscription stops counting the month after it ended', async () => {
    const res = await get(a, { start: '2025-04-01', end: '2025-04-30', interval: 'month' });
    expect(res.periods).toEqual([
      period('2025-04-01T00:00:00Z', { activeSubscriptions: 1, monthlyRecurringRevenue: 2000 }),
    ]);
  });
});

describe('other intervals', () => {
  it('year: one period for the whole year', async () => {
    const res = await get(a, { start: '2025-01-01', end: '2025-12-31', interval: 'year' });
    expect(res.periods).toEqual([
      period('2025-01-01T00:00:00Z', {
        orders: 6, revenue: 21001, cumulativeRevenue: 21001, averageOrderValue: 3501, // ceil(21001 / 6)
        oneTimeProducts: 2, oneTimeProductsRevenue: 2501,
        newSubscriptions: 2, newSubscriptionsRevenue: 18500, // every order of S1 (6000) and S2 (12500)
        activeSubscriptions: 2, monthlyRecurringRevenue: 3042,
      }),
    ]);
  });

  it('week: ISO weeks starting on Monday', async () => {
    const res = await get(a, { start: '2025-01-06', end: '2025-01-19', interval: 'week' });
    expect(res.periods).toEqual([
      period('2025-01-06T00:00:00Z', { orders: 1, revenue: 1000, cumulativeRevenue: 1000, averageOrderValue: 1000, oneTimeProducts: 1, oneTimeProductsRevenue: 1000 }),
      period('2025-01-13T00:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 3000, averageOrderValue: 2000,
        newSubscriptions: 1, newSubscriptionsRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
    ]);
  });

  it('day: one period per day, empty days zero', async () => {
    const res = await get(a, { start: '2025-01-14', end: '2025-01-16', interval: 'day' });
    expect(res.periods).toEqual([
      period('2025-01-14T00:00:00Z', {}),
      period('2025-01-15T00:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 2000, averageOrderValue: 2000,
        newSubscriptions: 1, newSubscriptionsRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
      period('2025-01-16T00:00:00Z', { cumulativeRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000 }),
    ]);
  });

  it('hour: 24 periods a day; the subscription is active from its starting hour', async () => {
    const res = await get(a, { start: '2025-01-15', end: '2025-01-15', interval: 'hour' });
    expect(res.periods).toHaveLength(24);
    expect(res.periods[0]!.timestamp).toEqual(new Date('2025-01-15T00:00:00Z'));
    expect(res.periods[23]!.timestamp).toEqual(new Date('2025-01-15T23:00:00Z'));
    expect(res.periods[11]).toEqual(period('2025-01-15T11:00:00Z', {}));
    expect(res.periods[12]).toEqual(
      period('2025-01-15T12:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 2000, averageOrderValue: 2000,
        newSubscriptions: 1, newSubscriptionsRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
    );
    expect(res.periods[13]).toEqual(period('2025-01-15T13:00:00Z', { cumulativeRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000 }));
  });

  it('timezone: days are local days (raw HTTP; the SDK has no timezone parameter)', async () => {
    const utc = await call(srv.url, a.token, 'GET', '/v1/metrics/?start_date=2025-01-20&end_date=2025-01-21&interval=day');
    expect(utc.status).toBe(200);
    expect(utc.body.periods.map((p: { timestamp: string; orders: number }) => [p.timestamp, p.orders])).toEqual([
      ['2025-01-20T00:00:00.000Z', 1],
      ['2025-01-21T00:00:00.000Z', 0],
    ]);
    const tokyo = await call(srv.url, a.token, 'GET', '/v1/metrics/?start_date=2025-01-20&end_date=2025-01-21&interval=day&timezone=Asia/Tokyo');
    expect(tokyo.status).toBe(200);
    // 2025-01-20T23:30Z is 08:30 on the 21st in Tokyo (UTC+9).
    expect(tokyo.body.periods.map((p: { timestamp: string; orders: number; revenue: number }) => [p.timestamp, p.orders, p.revenue])).toEqual([
      ['2025-01-19T15:00:00.000Z', 0, 0],
      ['2025-01-20T15:00:00.000Z', 1, 1501],
    ]);
    // A local day with a DST change has 23 hours, each once.
    const dst = await call(srv.url, a.token, 'GET', '/v1/metrics/?start_date=2025-03-09&end_date=2025-03-09&interval=hour&timezone=America/New_York');
    expect(dst.status).toBe(200);
    const stamps = dst.body.periods.map((p: { timestamp: string }) => p.timestamp);
    expect(stamps).toHaveLength(23);
    expect(new Set(stamps).size).toBe(23);
    expect(stamps[0]).toBe('2025-03-09T05:00:00.000Z');
    expect(stamps.at(-1)).toBe('2025-03-10T03:00:00.000Z');
    const bad = await call(srv.url, a.token, 'GET', '/v1/metrics/?start_date=2025-01-20&end_date=2025-01-21&interval=day&timezone=Mars/Olympus');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'timezone']);
  });
});

describe('filters', () => {
  it('product_id: only that product', async () => {
    const res = await get(a, { start: '2025-01-01', end: '2025-01-31', interval: 'month', productId: ids.oneTime });
    expect(res.periods).toEqual([
      period('2025-01-01T00:00:00Z', {
        orders: 2, revenue: 2501, cumulativeRevenue: 2501, averageOrderValue: 1251, oneTimeProducts: 2, oneTimeProductsRevenue: 2501,
      }),
    ]);
  });

  it('billing_type: recurring or one_time products', async () => {
    const recurring = await get(a, { start: '2025-01-01', end: '2025-01-31', interval: 'month', billingType: 'recurring' });
    expect(recurring.periods).toEqual([
      period('2025-01-01T00:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 2000, averageOrderValue: 2000,
        newSubscriptions: 1, newSubscriptionsRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
    ]);
    const oneTime = await get(a, { start: '2025-02-01', end: '2025-02-28', interval: 'month', billingType: ['one_time'] });
    expect(oneTime.periods).toEqual([period('2025-02-01T00:00:00Z', {})]); // the February one-time order is pending
  });

  it('customer_id: only that customer', async () => {
    const res = await get(a, { start: '2025-02-01', end: '2025-02-28', interval: 'month', customerId: ids.c2 });
    expect(res.periods).toEqual([
      period('2025-02-01T00:00:00Z', {
        orders: 1, revenue: 12500, cumulativeRevenue: 12500, averageOrderValue: 12500,
        newSubscriptions: 1, newSubscriptionsRevenue: 12500, activeSubscriptions: 1, monthlyRecurringRevenue: 1042,
      }),
    ]);
    // The same query for the other customer (the same statement, other values) answers for that customer.
    const other = await get(a, { start: '2025-02-01', end: '2025-02-28', interval: 'month', customerId: ids.c1 });
    expect(other.periods).toEqual([
      period('2025-02-01T00:00:00Z', {
        orders: 1, revenue: 2000, cumulativeRevenue: 2000, averageOrderValue: 2000,
        renewedSubscriptions: 1, renewedSubscriptionsRevenue: 2000, activeSubscriptions: 1, monthlyRecurringRevenue: 2000,
      }),
    ]);
    const days = await get(a, { start: '2025-02-09', end: '2025-02-10', interval: 'day', customerId: ids.c2 });
    expect(days.periods.map((p) => p.revenue)).toEqual([0, 12500]);
    const march = await get(a, { start: '2025-03-10', end: '2025-03-11', interval: 'day', customerId: ids.c2 });
    expect(march.periods.map((p) => [p.revenue, p.cumulativeRevenue, p.activeSubscriptions])).toEqual([[0, 0, 0], [0, 0, 0]]);
  });

  it('organization_id: another organization is never included', async () => {
    const own = await get(a, { start: '2025-01-01', end: '2025-01-31', interval: 'month', organizationId: a.organization.id });
    expect(own.periods[0]!.revenue).toBe(4501);
    const other = await get(a, { start: '2025-01-01', end: '2025-01-31', interval: 'month', organizationId: ids.bOrg });
    expect(other.periods).toEqual([period('2025-01-01T00:00:00Z', {})]);
    const theirs = await get(b, { start: '2025-01-01', end: '2025-01-31', interval: 'month' });
    expect(theirs.periods).toEqual([
      period('2025-01-01T00:00:00Z', {
        orders: 1, revenue: 7777, cumulativeRevenue: 7777, averageOrderValue: 7777,
        newSubscriptions: 1, newSubscriptionsRevenue: 7777, activeSubscriptions: 1, monthlyRecurringRevenue: 7777,
      }),
    ]);
  });
});

describe('validation and limits', () => {
  it('a range longer than the interval allows is a 422 (limits from GET /v1/metrics/limits)', async () => {
    const limits = await a.polar.metrics.limits();
    expect(limits.intervals.hour.maxDays).toBe(7);
    await expect(get(a, { start: '2025-01-01', end: '2025-01-09', interval: 'hour' })).rejects.toBeInstanceOf(HTTPValidationError);
    await expect(get(a, { start: '2024-01-01', end: '2025-01-02', interval: 'day' })).rejects.toBeInstanceOf(HTTPValidationError);
    const raw = await call(srv.url, a.token, 'GET', '/v1/metrics/?start_date=2024-01-01&end_date=2025-01-02&interval=day');
    expect(raw.status).toBe(422);
    expect(raw.body.error).toBe('RequestValidationError');
    expect(raw.body.detail[0].loc).toEqual(['query', 'end_date']);
    // The longest allowed ranges work.
    const hours = await get(a, { start: '2025-01-01', end: '2025-01-08', interval: 'hour' });
    expect(hours.periods).toHaveLength(8 * 24);
    const years = await get(a, { start: '2016-01-03', end: '2025-12-31', interval: 'year' }); // 3650 days
    expect(years.periods).toHaveLength(10);
    expect(years.periods[0]!.timestamp).toEqual(new Date('2016-01-03T00:00:00Z')); // the period covers all of 2016
    expect(years.periods.at(-1)!.cumulativeRevenue).toBe(21001);
  });

  it('rejects bad dates, intervals and an end before the start (422), and needs metrics:read', async () => {
    const cases = [
      '/v1/metrics/?start_date=2025-01-01&end_date=2025-01-31',
      '/v1/metrics/?start_date=2025-01-01&end_date=2025-01-31&interval=minute',
      '/v1/metrics/?start_date=2025-13-01&end_date=2025-01-31&interval=day',
      '/v1/metrics/?start_date=2025-01-31&end_date=2025-01-01&interval=day',
      '/v1/metrics/?start_date=2025-01-01&end_date=2025-01-31&interval=day&product_id=not-a-uuid',
    ];
    for (const path of cases) {
      const res = await call(srv.url, a.token, 'GET', path);
      expect(res.status, path).toBe(422);
      expect(res.body.error).toBe('RequestValidationError');
    }
    const anon = await call(srv.url, null, 'GET', '/v1/metrics/?start_date=2025-01-01&end_date=2025-01-31&interval=day');
    expect(anon.status).toBe(401);
    const noScope = await sellerWithSdk(srv, ['products:read']);
    const denied = await call(srv.url, noScope.token, 'GET', '/v1/metrics/?start_date=2025-01-01&end_date=2025-01-31&interval=day');
    expect(denied.status).toBe(403);
  });
});
