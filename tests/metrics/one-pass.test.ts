/**
 * GET /v1/metrics/ answers exactly what the per-period reference computation (reference.ts) gives,
 * over random orders and subscriptions (paid and pending orders, renewals, subscriptions that ended,
 * yearly ones, a subscription recorded as ending before it started), random ranges around the DST
 * changes, every interval, several time zones and the filters. Data keeps arriving between checks,
 * much of it dated in the past (late), and a customer is soft-deleted mid-way: the answers must
 * still equal the reference. Orders and subscriptions are also changed and deleted between checks
 * (status, date, amount, customer, subscription start, end and customer), and every query the aggregates can answer
 * (no customer or one, at most one product, no billing type) is also answered from them alone. The
 * hour and day aggregates the triggers keep must equal the ones computed from the orders' facts and
 * the subscriptions after every step.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { runSql } from '../../api/src/modules/events/sql.ts';
import { computeMetrics, computeMetricsFromBuckets, METRIC_SLUGS, type MetricsQuery } from '../../api/src/modules/metrics/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createProduct, sellerWithSdk } from '../catalogue/helpers-c.ts';
import { insertCustomer } from '../catalogue/helpers-b.ts';
import { coarseAggregates } from './coarse-check.ts';
import { insertOrder, insertSubscription, type SeedRefs } from './seed.ts';
import { referenceMetrics } from './reference.ts';

let srv: TestServer;
let seller: Awaited<ReturnType<typeof sellerWithSdk>>;
const products: { id: string; priceId: string; recurring: 'month' | 'year' | null }[] = [];
const customers: string[] = [];
const subscriptions: { id: string; startedAt: string }[] = [];

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  seller = await sellerWithSdk(srv, ['metrics:read', 'products:read', 'products:write']);
  const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];
  for (const [name, recurring, amount] of [
    ['E-book', null, 1000],
    ['Monthly', 'month', 2000],
    ['Yearly', 'year', 12500],
  ] as const) {
    const p = await createProduct(srv.url, seller.token, { name, recurring_interval: recurring, prices: fixed(amount) });
    products.push({ id: p.id, priceId: p.prices[0]!.id, recurring });
  }
  for (let i = 0; i < 3; i++) customers.push((await insertCustomer(srv, seller.organization.id)).id);
});
afterAll(async () => {
  await srv?.close();
});

const BASE = Date.UTC(2025, 2, 1); // March 2025: DST changes on 9 (New York) and 30 (Paris) March
const SPAN = 280 * 86_400_000; // to early December (the autumn changes included)
const HOUR = 3_600_000;
const instant = fc.oneof(
  fc.integer({ min: 0, max: SPAN }).map((ms) => BASE + ms),
  // On and around hour boundaries, where period edges fall.
  fc.tuple(fc.integer({ min: 0, max: SPAN / HOUR }), fc.constantFrom(-1, 0, 1, 1_799_999, 1_800_000)).map(([h, d]) => BASE + h * HOUR + d),
);
const iso = (ms: number) => new Date(ms).toISOString();

const subscriptionArb = fc.record({
  product: fc.constantFrom(1, 2),
  customer: fc.integer({ min: 0, max: 2 }),
  amount: fc.integer({ min: 0, max: 50_000 }),
  start: instant,
  ends: fc.option(fc.integer({ min: -3 * 86_400_000, max: 120 * 86_400_000 }), { nil: null }),
});
const orderArb = fc.record({
  product: fc.integer({ min: 0, max: 2 }),
  customer: fc.integer({ min: 0, max: 2 }),
  net: fc.integer({ min: 0, max: 100_000 }),
  at: instant,
  status: fc.constantFrom('paid', 'paid', 'refunded', 'pending'),
  subscription: fc.option(fc.nat(), { nil: null }),
});
const changeArb = fc.record({
  what: fc.constantFrom('order-status', 'order-date', 'order-net', 'order-delete', 'order-customer', 'sub-start', 'sub-end', 'sub-customer'),
  pick: fc.nat(),
  customer: fc.integer({ min: 0, max: 2 }),
  at: instant,
  net: fc.integer({ min: 0, max: 100_000 }),
});
type Sub = typeof subscriptionArb extends fc.Arbitrary<infer T> ? T : never;
type Ord = typeof orderArb extends fc.Arbitrary<infer T> ? T : never;
const INTERVAL_DAYS: Record<MetricsQuery['interval'], number> = { hour: 6, day: 120, week: 200, month: 280, year: 400 };
const queryArb = fc.record({
  interval: fc.constantFrom<MetricsQuery['interval']>('hour', 'day', 'week', 'month', 'year'),
  startDay: fc.integer({ min: -5, max: 280 }),
  days: fc.nat(),
  timezone: fc.constantFrom('UTC', 'Europe/Paris', 'America/New_York', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Lord_Howe'),
  product: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
  billing: fc.option(fc.constantFrom<'one_time' | 'recurring'>('one_time', 'recurring'), { nil: null }),
  customer: fc.option(fc.integer({ min: 0, max: 2 }), { nil: null }),
});
type Change = typeof changeArb extends fc.Arbitrary<infer T> ? T : never;
type Query = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

async function seed(subs: Sub[], orders: Ord[]) {
  for (const s of subs) {
    const p = products[s.product]!;
    const refs: SeedRefs = { organizationId: seller.organization.id, customerId: customers[s.customer]!, productId: p.id, priceId: p.priceId };
    const startedAt = iso(s.start);
    const id = await insertSubscription(srv, refs, {
      amount: s.amount,
      interval: p.recurring ?? 'month',
      startedAt,
      endedAt: s.ends === null ? null : iso(s.start + s.ends),
    });
    subscriptions.push({ id, startedAt });
  }
  for (const o of orders) {
    const sub = o.subscription === null || !subscriptions.length ? null : subscriptions[o.subscription % subscriptions.length]!;
    const p = products[sub ? 1 : o.product]!;
    const refs: SeedRefs = { organizationId: seller.organization.id, customerId: customers[o.customer]!, productId: p.id, priceId: p.priceId };
    await insertOrder(srv, refs, { net: o.net, createdAt: iso(o.at), subscriptionId: sub?.id ?? null, status: o.status as 'paid' });
  }
}

/** Late corrections: what the order and subscription triggers must follow. */
async function change(c: Change) {
  const em = srv.deps.orm.em.fork();
  const table = c.what.startsWith('order') ? 'orders' : 'subscriptions';
  const { rows } = await runSql<{ id: string }>(em, `select id from ${table} where organization_id = $1 order by id`, [seller.organization.id]);
  const id = rows.length ? rows[c.pick % rows.length]!.id : null;
  if (!id) return;
  const statements: Record<Change['what'], [string, unknown[]]> = {
    'order-status': [`update orders set status = case when status = 'pending' then 'paid' else 'pending' end where id = $1`, [id]],
    'order-date': [`update orders set created_at = $2 where id = $1`, [id, iso(c.at)]],
    'order-net': [`update orders set net_amount = $2 where id = $1`, [id, c.net]],
    'order-delete': [`delete from orders where id = $1`, [id]],
    'order-customer': [`update orders set customer_id = $2 where id = $1`, [id, customers[c.customer]]],
    'sub-customer': [`update subscriptions set customer_id = $2 where id = $1`, [id, customers[c.customer]]],
    'sub-start': [`update subscriptions set started_at = $2 where id = $1`, [id, iso(c.at)]],
    'sub-end': [`update subscriptions set ended_at = case when ended_at is null then $2::timestamptz end where id = $1`, [id, iso(c.at)]],
  };
  const [sql, params] = statements[c.what];
  await runSql(em, sql, params);
}

function toQuery(q: Query): MetricsQuery {
  const start = new Date(BASE + q.startDay * 86_400_000);
  const end = new Date(start.getTime() + (q.days % (INTERVAL_DAYS[q.interval] + 1)) * 86_400_000);
  return {
    startDate: start.toISOString().slice(0, 10),
    endDate: end.toISOString().slice(0, 10),
    interval: q.interval,
    timezone: q.timezone,
    organizationIds: [seller.organization.id],
    productIds: q.product === null ? undefined : [products[q.product]!.id],
    billingTypes: q.billing === null ? undefined : [q.billing],
    customerIds: q.customer === null ? undefined : [customers[q.customer]!],
  };
}

const asJson = (periods: Awaited<ReturnType<typeof computeMetrics>>): Record<string, string | number>[] =>
  periods.map((p) => ({ timestamp: p.timestamp.toISOString(), ...Object.fromEntries(METRIC_SLUGS.map((s) => [s, p[s]])) }));

describe('metrics in one pass', () => {
  it('equal the per-period reference over random data, late data and a deleted customer included', async () => {
    let compared = 0;
    let fromAggregates = 0;
    let coarseRows = 0;
    let utcDayReads = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(subscriptionArb, { maxLength: 6 }),
        fc.array(orderArb, { maxLength: 12 }),
        fc.array(queryArb, { minLength: 1, maxLength: 4 }),
        fc.boolean(),
        fc.array(changeArb, { maxLength: 4 }),
        async (subs, orders, queries, deleteCustomer, changes) => {
          await seed(subs, orders);
          for (const c of changes) await change(c);
          if (deleteCustomer) {
            const em = srv.deps.orm.em.fork();
            const c = await em.findOneOrFail(Customer, customers[2]!);
            c.deletedAt ??= new Date();
            await em.flush();
          }
          // The hour and day aggregates the triggers keep equal the ones computed from the facts and subscriptions.
          const coarse = await coarseAggregates(srv.deps.orm.em.fork(), seller.organization.id);
          for (const { kept, recomputed } of Object.values(coarse)) expect(kept).toEqual(recomputed);
          coarseRows += coarse['customer order hours']!.kept.length + coarse['customer order days']!.kept.length + coarse['customer subscription hours and days']!.kept.length;
          // One customer's UTC days (read from the customer's day rows) in every run, besides the random queries.
          const utcDays = { ...queries[0]!, interval: 'day' as const, timezone: 'UTC' as const, billing: null, customer: queries[0]!.customer ?? 0 };
          const days = toQuery(utcDays);
          expect(asJson((await computeMetricsFromBuckets(srv.deps.orm.em.fork(), days))!)).toEqual(asJson(await referenceMetrics(srv.deps.orm.em.fork(), days)));
          utcDayReads++;
          for (const raw of queries) {
            const q = toQuery(raw);
            const expected = await referenceMetrics(srv.deps.orm.em.fork(), q);
            expect(expected.length).toBeGreaterThan(0);
            expect(asJson(await computeMetrics(srv.deps.orm.em.fork(), q))).toEqual(asJson(expected));
            compared++;
            // The same query without a billing type, for all customers and for one, is one the aggregates
            // answer (every zone here starts its hours on a quarter hour): from them alone, it must equal the
            // reference too. Orders here may belong to another customer than their subscription.
            for (const customer of [null, raw.customer ?? 0]) {
              const wide = toQuery({ ...raw, customer, billing: null });
              const fromBuckets = await computeMetricsFromBuckets(srv.deps.orm.em.fork(), wide);
              expect(fromBuckets).not.toBeNull();
              expect(asJson(fromBuckets!)).toEqual(asJson(await referenceMetrics(srv.deps.orm.em.fork(), wide)));
              fromAggregates++;
            }
          }
        },
      ),
      { numRuns: 25 },
    );
    expect(compared).toBeGreaterThanOrEqual(25);
    expect(fromAggregates).toBe(2 * compared);
    expect(coarseRows).toBeGreaterThan(0);
    expect(utcDayReads).toBeGreaterThanOrEqual(25);
  });

  it('answer the same through GET /v1/metrics/ as the reference, every filter at once', async () => {
    const q = toQuery({ interval: 'day', startDay: 0, days: 60, timezone: 'Europe/Paris', product: 1, billing: 'recurring', customer: 0 });
    const qs = new URLSearchParams({
      start_date: q.startDate,
      end_date: q.endDate,
      interval: q.interval,
      timezone: q.timezone,
      product_id: q.productIds![0]!,
      billing_type: 'recurring',
      customer_id: q.customerIds![0]!,
    });
    const res = await call(srv.url, seller.token, 'GET', `/v1/metrics/?${qs}`);
    expect(res.status).toBe(200);
    const expected = asJson(await referenceMetrics(srv.deps.orm.em.fork(), q));
    expect(expected).toHaveLength(61);
    expect(res.body.periods).toEqual(expected);
    expect(expected.reduce((n, p) => n + (p.orders as number) + (p.active_subscriptions as number), 0)).toBeGreaterThan(0);
  });
});

