/**
 * Meter rollups (issue #22) agree with raw aggregation: a fast-check property over random event
 * streams (ingested in random batches before and after the meter exists, late events included),
 * random filters and aggregations, a meter changed mid-stream, random ranges (any millisecond, in
 * any UTC offset), intervals and customer filters (including a soft-deleted customer). The
 * rollup-backed GET /v1/meters/{id}/quantities must equal the raw-scan reference exactly.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { insertEvents, type EventInsert } from '../../api/src/modules/events/service.ts';
import { runSql } from '../../api/src/modules/events/sql.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Meter, type Aggregation, type Filter, type FilterClause } from '../../api/src/modules/meters/entities.ts';
import { rawMeterQuantities } from '../../api/src/modules/meters/service.ts';
import { mergeRollups } from '../../api/src/modules/meters/rollups.ts';
import type { Pool } from 'pg';
import { existingGenericPool, GENERIC_POOL_APPLICATION_NAME } from '../../api/src/kit/generic-pool.ts';
import type { TimeInterval } from '../../api/src/modules/meters/schemas.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createCustomer, usageSeller } from '../catalogue/events-helpers.ts';

const HOUR = 3_600_000;
const BASE = Date.UTC(2025, 0, 6); // a Monday; events span half a day from here (dense: hours and customers repeat)
/**
 * Where the property's events start: Sunday 18:00 UTC, so its half day crosses a UTC day's and an ISO
 * week's start (whole days, read from the day rollups, and partial days both hold events).
 */
const PROPERTY_BASE = Date.UTC(2025, 0, 5, 18);
/** The origin of events' offsets for `ingest` and `compare` (the property sets PROPERTY_BASE). */
let base = BASE;
const SPAN_HOURS = 12;

let srv: TestServer;
let s: Awaited<ReturnType<typeof usageSeller>>;
let customers: { id: string; externalId: string | null }[];
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await usageSeller(srv);
  customers = [
    await createCustomer(srv, s.organization.id, { externalId: 'ext-1' }),
    await createCustomer(srv, s.organization.id, { externalId: 'ext-2' }),
    await createCustomer(srv, s.organization.id, { externalId: null }),
    await createCustomer(srv, s.organization.id, { externalId: 'ext-4' }),
  ];
  // The last customer is deleted (soft): its events stay, lookups by its external id stop matching.
  const em = srv.deps.orm.em.fork();
  const gone = await em.findOneOrFail(Customer, customers[3]!.id);
  gone.deletedAt = new Date();
  await em.flush();
});
afterAll(async () => {
  await srv?.close();
});

// ---- generators --------------------------------------------------------------------------------

const offsetMs = fc.oneof(
  fc.integer({ min: 0, max: SPAN_HOURS }).map((h) => h * HOUR),
  fc.integer({ min: 0, max: SPAN_HOURS * HOUR - 1 }),
  fc.tuple(fc.integer({ min: 1, max: SPAN_HOURS - 1 }), fc.integer({ min: -1500, max: 1500 })).map(([h, d]) => h * HOUR + d),
);
const numberValue = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(1.5, 0.25, -2.75, 1000, 0.1));
const metaValue = fc.oneof({ arbitrary: numberValue, weight: 4 }, fc.constantFrom('x', 'y', 'xy', '1'), fc.boolean());
const customerRef = fc.oneof(
  fc.integer({ min: 0, max: 3 }).map((i) => ({ customer: i })),
  fc.constantFrom('ext-1', 'ext-2', 'ext-9').map((ext) => ({ external: ext })),
);
const eventArb = fc.record({
  name: fc.constantFrom('api', 'upload'),
  at: offsetMs,
  who: customerRef,
  system: fc.boolean(),
  metadata: fc.record({ a: metaValue, b: fc.constantFrom<string | number>('x', 'y', 'xy', '1', 2), c: fc.boolean() }, { requiredKeys: ['a'] }),
});
type GenEvent = typeof eventArb extends fc.Arbitrary<infer T> ? T : never;

const clauseArb: fc.Arbitrary<FilterClause> = fc.oneof(
  fc.record({
    property: fc.constantFrom('a', 'b', 'c', 'missing'),
    operator: fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like'),
    value: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom('x', 'y', '1'), fc.boolean()),
  }),
  fc.record({
    property: fc.constantFrom('name', 'source', 'external_customer_id'),
    operator: fc.constantFrom('eq', 'ne', 'like', 'not_like', 'gt'),
    value: fc.constantFrom('api', 'upload', 'user', 'system', 'ext-1', 'p', 'ext'),
  }),
  fc.record({
    property: fc.constant('timestamp'),
    operator: fc.constantFrom('gt', 'gte', 'lt', 'lte'),
    value: offsetMs.map((o) => Math.floor((PROPERTY_BASE + o) / 1000)),
  }),
) as fc.Arbitrary<FilterClause>;
const filterArb: fc.Arbitrary<Filter> = fc.letrec<{ group: Filter }>((tie) => ({
  group: fc.record({
    conjunction: fc.constantFrom<'and' | 'or'>('and', 'or'),
    clauses: fc.array(fc.oneof({ depthSize: 'small', withCrossShrink: true }, clauseArb, tie('group')), { maxLength: 3 }),
  }),
})).group;
const aggregationArb: fc.Arbitrary<Aggregation> = fc.oneof(
  fc.constant<Aggregation>({ func: 'count' }),
  fc.record({
    func: fc.constantFrom<'sum' | 'max' | 'min' | 'avg'>('sum', 'max', 'min', 'avg'),
    property: fc.constantFrom('a', 'a', 'a', 'b', 'missing'),
  }),
);
const queryArb = fc.record({
  interval: fc.constantFrom<TimeInterval>('hour', 'day', 'week', 'month', 'year'),
  start: fc.integer({ min: -30 * HOUR, max: (SPAN_HOURS + 2) * HOUR }),
  /** When set, the range starts this close to the `near`-th event instead (partial hours then hold events). */
  near: fc.option(fc.tuple(fc.nat(), fc.oneof(fc.constant(0), fc.integer({ min: -40 * 60_000, max: 40 * 60_000 }))), { nil: null }),
  endNear: fc.option(fc.tuple(fc.nat(), fc.oneof(fc.constant(0), fc.integer({ min: -40 * 60_000, max: 40 * 60_000 }))), { nil: null }),
  length: fc.oneof(fc.integer({ min: 0, max: 6 * 24 }).map((h) => h * HOUR), fc.integer({ min: 0, max: 6 * 24 * HOUR })),
  utcOffsetMinutes: fc.constantFrom(0, 60, -300, 330, 345, -570),
  who: fc.constantFrom<'all' | 'c0' | 'c3' | 'ext-1' | 'ext-4' | 'ext-9' | 'c0+ext-2'>('all', 'c0', 'c3', 'ext-1', 'ext-4', 'ext-9', 'c0+ext-2'),
});
type GenQuery = typeof queryArb extends fc.Arbitrary<infer T> ? T : never;

// ---- helpers -----------------------------------------------------------------------------------

/** An ISO-8601 timestamp of `ms` written in the given UTC offset (what a client in that zone sends). */
function inOffset(ms: number, minutes: number): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, -1);
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

async function ingest(events: GenEvent[], batchSizes: number[]): Promise<void> {
  const rows = (e: GenEvent): EventInsert & { system: boolean } => ({
    organizationId: s.organization.id,
    name: e.name,
    timestamp: new Date(base + e.at),
    customerId: 'customer' in e.who ? customers[e.who.customer]!.id : null,
    externalCustomerId: 'external' in e.who ? e.who.external : null,
    metadata: e.metadata,
    system: e.system,
  });
  let i = 0;
  let b = 0;
  while (i < events.length) {
    const size = Math.max(1, batchSizes[b++ % Math.max(1, batchSizes.length)] ?? events.length);
    const batch = events.slice(i, i + size).map(rows);
    i += size;
    // One source per batch, as the API and the meter-credit path write them.
    await insertEvents(srv.deps.orm.em.fork(), batch, batch[0]!.system ? 'system' : 'user');
  }
}

async function compare(meterId: string, q: GenQuery, events: GenEvent[]): Promise<void> {
  const at = (near: [number, number] | null) => (near && events.length ? base + events[near[0] % events.length]!.at + near[1] : null);
  const start = at(q.near) ?? base + q.start;
  const end = Math.max(start, at(q.endNear) ?? start + q.length);
  if (q.interval === 'hour' && end - start > 7 * 24 * HOUR) return; // over the hour interval's limit
  const filters: { customerIds?: string[]; externalCustomerIds?: string[] } = {
    all: {},
    c0: { customerIds: [customers[0]!.id] },
    c3: { customerIds: [customers[3]!.id] },
    'ext-1': { externalCustomerIds: ['ext-1'] },
    'ext-4': { externalCustomerIds: ['ext-4'] },
    'ext-9': { externalCustomerIds: ['ext-9'] },
    'c0+ext-2': { customerIds: [customers[0]!.id], externalCustomerIds: ['ext-2'] },
  }[q.who];
  const qs = new URLSearchParams({
    start_timestamp: inOffset(start, q.utcOffsetMinutes),
    end_timestamp: inOffset(end, q.utcOffsetMinutes),
    interval: q.interval,
  });
  for (const id of filters.customerIds ?? []) qs.append('customer_id', id);
  for (const id of filters.externalCustomerIds ?? []) qs.append('external_customer_id', id);
  const res = await call(srv, s.token, 'GET', `/v1/meters/${meterId}/quantities?${qs}`);
  expect(res.status).toBe(200);
  const em = srv.deps.orm.em.fork();
  const meter = await em.findOneOrFail(Meter, meterId);
  const reference = await rawMeterQuantities(em, meter, {
    start: new Date(start),
    end: new Date(end),
    interval: q.interval,
    ...filters,
  });
  expect(res.body.quantities).toEqual(reference);
}

/**
 * The coarser and finer rollups of a meter agree with its per-customer hourly rows, exactly
 * (numeric), row for row (nothing missing, nothing extra): the customer-less hourly totals are the
 * hours' sums, the per-customer day rows the sums of the customers' hours per UTC day, and the
 * customer-less minute rows sum per hour to the hours' totals.
 */
async function expectTotalsAgree(meterId: string): Promise<void> {
  const agree = async (expected: string, actual: string) => {
    const { rows } = await runSql<{ missing: string; extra: string; actual: string; expected: string }>(
      srv.deps.orm.em.fork(),
      `with expected as (${expected}), actual as (${actual})
       select (select count(*) from (select * from expected except select * from actual) x) as missing,
              (select count(*) from (select * from actual except select * from expected) x) as extra,
              (select count(*) from actual) as actual, (select count(*) from expected) as expected`,
      [meterId],
    );
    expect(rows[0]).toEqual({ missing: '0', extra: '0', actual: rows[0]!.expected, expected: rows[0]!.expected });
  };
  const sums = 'sum("n") as n, sum("vn") as vn, sum("vsum") as vsum, min("vmin") as vmin, max("vmax") as vmax';
  const hourTotals = `select "hour", ${sums} from "meter_rollups" where "meter_id" = $1 group by 1`;
  await agree(hourTotals, 'select "hour", "n", "vn", "vsum", "vmin", "vmax" from "meter_rollup_totals" where "meter_id" = $1');
  await agree(
    `select date_trunc('day', "hour", 'UTC') as day, "customer_id", "external_customer_id", ${sums} from "meter_rollups" where "meter_id" = $1 group by 1, 2, 3`,
    'select "day", "customer_id", "external_customer_id", "n", "vn", "vsum", "vmin", "vmax" from "meter_rollup_days" where "meter_id" = $1',
  );
  await agree(hourTotals, `select date_trunc('hour', "minute", 'UTC') as hour, ${sums} from "meter_rollup_minutes" where "meter_id" = $1 group by 1`);
}

/** Every whole hour of the events' span, all customers (read from the customer-less rollup alone once merged). */
const wholeHours: GenQuery = { interval: 'hour', start: -HOUR, length: (SPAN_HOURS + 2) * HOUR, near: null, endNear: null, utcOffsetMinutes: 0, who: 'all' };
/** Three UTC days around the property's events (whole days from the day rollups) for one customer, and by external id with another. */
const wholeDays: GenQuery[] = [
  { interval: 'day', start: -18 * HOUR - 1, length: 3 * 24 * HOUR + 7, near: null, endNear: null, utcOffsetMinutes: 0, who: 'c0' },
  { interval: 'week', start: -18 * HOUR + 1, length: 2 * 24 * HOUR, near: null, endNear: null, utcOffsetMinutes: 330, who: 'c0+ext-2' },
];

// ---- the property ------------------------------------------------------------------------------

describe('meter rollups', () => {
  it('give the same quantities as a raw scan, whatever the events, filter, aggregation, range and interval', async () => {
    base = PROPERTY_BASE;
    onTestFinished(() => {
      base = BASE;
    });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          before: fc.array(eventArb, { maxLength: 40 }),
          after: fc.array(eventArb, { maxLength: 40 }),
          afterChange: fc.array(eventArb, { maxLength: 20 }),
          batchSizes: fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 4 }),
          filter: filterArb,
          aggregation: aggregationArb,
          change: fc.option(fc.record({ filter: fc.option(filterArb), aggregation: fc.option(aggregationArb) }), { nil: null }),
          queries: fc.array(queryArb, { minLength: 1, maxLength: 4 }),
          /** Whether the rollups merge the ingested batches before the queries (else they read them as the unmerged tail). */
          merged: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
        }),
        async (run) => {
          const em = srv.deps.orm.em.fork();
          await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
          await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);

          const merge = async (i: number) => {
            if (run.merged[i]) await mergeRollups(srv.deps.orm.em.fork(), s.organization.id);
          };
          await ingest(run.before, run.batchSizes);
          await merge(0);
          const created = await call(srv, s.token, 'POST', '/v1/meters/', { name: 'Property', filter: run.filter, aggregation: run.aggregation });
          expect(created.status).toBe(201);
          const meterId: string = created.body.id;
          // Later batches, many of them late (timestamps anywhere in the past window).
          await ingest(run.after, run.batchSizes);
          await merge(1);
          for (const q of [...run.queries.slice(0, 2), ...wholeDays]) await compare(meterId, q, [...run.before, ...run.after]);
          await expectTotalsAgree(meterId);
          if (run.change) {
            const body = { filter: run.change.filter, aggregation: run.change.aggregation };
            expect((await call(srv, s.token, 'PATCH', `/v1/meters/${meterId}`, body)).status).toBe(200);
          }
          await ingest(run.afterChange, run.batchSizes);
          await merge(2);
          for (const q of [...run.queries, ...wholeDays]) await compare(meterId, q, [...run.before, ...run.after, ...run.afterChange]);
          await expectTotalsAgree(meterId);
          await mergeRollups(srv.deps.orm.em.fork(), s.organization.id);
          await expectTotalsAgree(meterId);
          await compare(meterId, wholeHours, []);
          for (const q of wholeDays) await compare(meterId, q, []);
        },
      ),
      { numRuns: Number(process.env.ROLLUP_PROPERTY_RUNS ?? 30), endOnFailure: true },
    );
  }, 600_000);

  it('merge batches landing in the same hour and customer, for every aggregation', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const all = { conjunction: 'and', clauses: [] };
    const ids: Record<string, string> = {};
    for (const aggregation of [{ func: 'count' }, ...['sum', 'max', 'min', 'avg'].map((func) => ({ func, property: 'a' }))]) {
      const m = await call(srv, s.token, 'POST', '/v1/meters/', { name: `Merge ${aggregation.func}`, filter: all, aggregation });
      ids[aggregation.func] = m.body.id;
    }
    const ev = (a: number | 'x', minute: number): GenEvent => ({ name: 'api', at: 2 * HOUR + minute * 60_000, who: { customer: 0 }, system: false, metadata: { a } });
    await ingest([ev(4, 5), ev('x', 6)], [2]);
    await ingest([ev(7, 10), ev(-3, 20)], [2]);
    await ingest([ev(5, 30)], [1]); // neither the extreme values: the merge must keep them
    await mergeRollups(em, s.organization.id);
    const expected = { count: 5, sum: 13, max: 7, min: -3, avg: 13 / 4 };
    for (const [func, id] of Object.entries(ids)) {
      const q = await call(
        srv,
        s.token,
        'GET',
        `/v1/meters/${id}/quantities?start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 5 * HOUR).toISOString()}&interval=day&customer_id=${customers[0]!.id}`,
      );
      expect(q.body.quantities).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: expected[func as keyof typeof expected] }]);
    }
    const { rows } = await runSql<{ n: string }>(em, 'select count(*) as n from "meter_rollups" where "meter_id" = $1', [ids.count]);
    expect(Number(rows[0]!.n)).toBe(1);
    for (const id of Object.values(ids)) await expectTotalsAgree(id);
  });

  it('stay exact when batches are ingested while the meter changes (ingest and rebuild exclude each other)', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Racing',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] },
      aggregation: { func: 'sum', property: 'a' },
    });
    const batch = (k: number): GenEvent[] =>
      Array.from({ length: 20 }, (_, i) => ({
        name: i % 3 ? 'api' : 'upload',
        at: ((k * 20 + i) * 997_003) % (SPAN_HOURS * HOUR),
        who: { customer: i % 3 },
        system: false,
        metadata: { a: (k + i) % 7 },
      }));
    const patches = [
      { aggregation: { func: 'count' } },
      { filter: { conjunction: 'or', clauses: [{ property: 'a', operator: 'gte', value: 3 }] } },
      { aggregation: { func: 'max', property: 'a' } },
    ];
    await Promise.all([
      ...Array.from({ length: 12 }, (_, k) => ingest(batch(k), [20])),
      ...patches.map(async (body, i) => {
        await new Promise((r) => setTimeout(r, 15 * i));
        expect((await call(srv, s.token, 'PATCH', `/v1/meters/${created.body.id}`, body)).status).toBe(200);
      }),
    ]);
    for (const who of ['all', 'c0', 'ext-1'] as const) {
      await compare(created.body.id, { interval: 'hour', start: -HOUR / 2, length: SPAN_HOURS * HOUR, near: null, endNear: null, utcOffsetMinutes: 0, who }, []);
    }
  });

  it('follow a customer row removed outright (its events lose the customer id; the rollups are not rebuilt)', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const doomed = await createCustomer(srv, s.organization.id, { externalId: 'ext-doomed' });
    const created = await call(srv, s.token, 'POST', '/v1/meters/', { name: 'Doomed', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    await insertEvents(srv.deps.orm.em.fork(), [
      { organizationId: s.organization.id, name: 'api', timestamp: new Date(BASE + 2 * HOUR), customerId: doomed.id },
      { organizationId: s.organization.id, name: 'api', timestamp: new Date(BASE + 3 * HOUR), externalCustomerId: 'ext-doomed' },
    ]);
    await runSql(em, 'delete from "customers" where "id" = $1', [doomed.id]);
    const range = `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 5 * HOUR).toISOString()}&interval=day`;
    const byId = await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}&customer_id=${doomed.id}`);
    expect(byId.body.quantities.map((b: { quantity: number }) => b.quantity)).toEqual([0]);
    const everyone = await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}`);
    expect(everyone.body.quantities.map((b: { quantity: number }) => b.quantity)).toEqual([2]);
  });

  it('are built for a meter whose rollups are missing or out of date (meters from before the rollups)', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Legacy',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] },
      aggregation: { func: 'sum', property: 'a' },
    });
    await ingest(
      [
        { name: 'api', at: 1.5 * HOUR, who: { customer: 0 }, system: false, metadata: { a: 2 } },
        { name: 'api', at: 30 * HOUR, who: { customer: 1 }, system: false, metadata: { a: 5 } },
      ],
      [1],
    );
    // As a migrated meter: no rollups and no recorded definition.
    await runSql(em, 'delete from "meter_rollups" where "meter_id" = $1', [created.body.id]);
    await runSql(em, 'update "meters" set "rollup" = null where "id" = $1', [created.body.id]);
    const q = await call(
      srv,
      s.token,
      'GET',
      `/v1/meters/${created.body.id}/quantities?start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 47 * HOUR).toISOString()}&interval=day`,
    );
    expect(q.body.quantities.map((b: { quantity: number }) => b.quantity)).toEqual([2, 5]);
    const { rows } = await runSql<{ n: string }>(em, 'select count(*) as n from "meter_rollups" where "meter_id" = $1', [created.body.id]);
    expect(Number(rows[0]!.n)).toBe(2);
  });

  it('count events committed but never merged (as after a crash), and a later merge neither loses nor repeats them', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Crash',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'sum', property: 'a' },
    });
    await ingest([{ name: 'api', at: 2 * HOUR, who: { customer: 0 }, system: false, metadata: { a: 3 } }], [1]);
    await mergeRollups(em, s.organization.id);
    // Written by a process that died before its merge: committed, never merged.
    await runSql(
      em,
      `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "metadata")
       values (gen_random_uuid(), now(), $1, 'api', 'user', $2, $3, '{"a": 4}'), (gen_random_uuid(), now(), $4, 'api', 'user', $2, $3, '{"a": 5}')`,
      [new Date(BASE + 2 * HOUR + 60_000), s.organization.id, customers[0]!.id, new Date(BASE + 7 * HOUR)],
    );
    const range = `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 10 * HOUR).toISOString()}&interval=day`;
    const read = async () => (await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}`)).body.quantities;
    const rolledSum = async () =>
      Number((await runSql<{ n: string }>(em, 'select coalesce(sum("vsum"), 0) as n from "meter_rollups" where "meter_id" = $1', [created.body.id])).rows[0]!.n);
    expect(await rolledSum()).toBe(3);
    expect(await read()).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 12 }]);
    await mergeRollups(em, s.organization.id);
    expect(await rolledSum()).toBe(12);
    await mergeRollups(em, s.organization.id);
    expect(await rolledSum()).toBe(12);
    expect(await read()).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 12 }]);
  });

  it('count events committed after a read and not merged yet, for every range a read may take', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Pending',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'sum', property: 'a' },
    });
    await ingest([{ name: 'api', at: 2 * HOUR, who: { customer: 0 }, system: false, metadata: { a: 3 } }], [1]);
    await mergeRollups(em, s.organization.id);
    const ranges = [
      `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 10 * HOUR).toISOString()}&interval=day`,
      `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 3 * 86_400_000).toISOString()}&interval=day&customer_id=${customers[0]!.id}`,
    ];
    const read = async (range: string) => {
      const res = await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}`);
      expect(res.status).toBe(200);
      return (res.body.quantities as { quantity: number }[]).reduce((t, b) => t + b.quantity, 0);
    };
    for (const range of ranges) {
      expect(await read(range)).toBe(3);
      expect(await read(range)).toBe(3);
    }
    // Committed after those reads, by a writer whose merge has not run: the next reads count it.
    await runSql(
      em,
      `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "metadata")
       values (gen_random_uuid(), now(), $1, 'api', 'user', $2, $3, '{"a": 4}')`,
      [new Date(BASE + 2 * HOUR + 60_000), s.organization.id, customers[0]!.id],
    );
    for (const range of ranges) expect(await read(range)).toBe(7);
    await mergeRollups(em, s.organization.id);
    for (const range of ranges) expect(await read(range)).toBe(7);
  });

  it('answer again after PostgreSQL cut the connections of the generic-plan reads', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Cut',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'sum', property: 'a' },
    });
    await ingest([{ name: 'api', at: 2 * HOUR, who: { customer: 0 }, system: false, metadata: { a: 3 } }], [1]);
    await mergeRollups(em, s.organization.id);
    const range = `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 3 * 86_400_000).toISOString()}&interval=day&customer_id=${customers[0]!.id}`;
    const total = (res: { body: { quantities: { quantity: number }[] } }) => res.body.quantities.reduce((t, b) => t + b.quantity, 0);
    for (let k = 0; k < 3; k++) {
      const res = await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}`);
      expect(res.status).toBe(200);
      expect(total(res)).toBe(3);
    }
    // An error nobody listens for (a cut idle connection's) would end the API process: none may escape.
    const escaped: unknown[] = [];
    const onUncaught = (err: unknown) => escaped.push(err);
    process.on('uncaughtException', onUncaught);
    const cut = await runSql<{ pid: number }>(
      em,
      `select pg_terminate_backend("pid"), "pid" from pg_stat_activity where "datname" = current_database() and "application_name" = $1`,
      [GENERIC_POOL_APPLICATION_NAME],
    );
    expect(cut.rows.length).toBeGreaterThan(0);
    // Until the pool has heard of every cut (an idle connection's error then reaches its listeners).
    const generic = existingGenericPool((await srv.deps.orm.em.getConnection().getNativeClient()) as unknown as Pool)!;
    for (let k = 0; k < 100 && generic.totalCount > 0; k++) await new Promise((r) => setTimeout(r, 50));
    expect(generic.totalCount).toBe(0);
    // A read on a connection cut under it answers 503 (retry later); the next ones answer again.
    const statuses: number[] = [];
    for (let k = 0; k < 5 && statuses.at(-1) !== 200; k++) {
      const res = await call(srv, s.token, 'GET', `/v1/meters/${created.body.id}/quantities?${range}`);
      statuses.push(res.status);
      if (res.status === 200) expect(total(res)).toBe(3);
    }
    process.off('uncaughtException', onUncaught);
    expect(escaped).toEqual([]);
    expect(statuses.at(-1)).toBe(200);
    expect(statuses.every((x) => x === 200 || x === 503)).toBe(true);
  });

  it("count an organization's unmerged events while another organization's merges run", async () => {
    const em = srv.deps.orm.em.fork();
    const other = await usageSeller(srv);
    const mine = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Mine',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'count' },
    });
    const theirs = await call(srv, other.token, 'POST', '/v1/meters/', {
      name: 'Theirs',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'count' },
    });
    const range = `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 10 * HOUR).toISOString()}&interval=day`;
    const read = async () => (await call(srv, other.token, 'GET', `/v1/meters/${theirs.body.id}/quantities?${range}`)).body.quantities;
    expect(await read()).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 0 }]);
    // The other organization's events, committed and not merged; then this organization ingests and merges.
    const rawEvent = `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "metadata")
      values (gen_random_uuid(), now(), $1, 'api', 'user', $2, '{}')`;
    await runSql(em, rawEvent, [new Date(BASE + 3 * HOUR), other.organization.id]);
    await ingest([{ name: 'api', at: 2 * HOUR, who: { customer: 0 }, system: false, metadata: { a: 3 } }], [1]);
    await mergeRollups(em, s.organization.id);
    await runSql(em, rawEvent, [new Date(BASE + 4 * HOUR), s.organization.id]);
    await mergeRollups(em, s.organization.id);
    expect(await read()).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 1 }]);
    await mergeRollups(em, other.organization.id);
    expect(await read()).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 1 }]);
    await runSql(em, 'delete from "meters" where "id" = any($1::uuid[])', [[mine.body.id, theirs.body.id]]);
  });

  it("keep no other organization's transactions for an organization that stopped ingesting, and read its meter exactly", async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const idle = await call(srv, s.token, 'POST', '/v1/meters/', { name: 'Idle', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    // Its last events and their merge (written in SQL: no merge of this organization is left scheduled).
    await runSql(
      em,
      `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "metadata")
       values (gen_random_uuid(), now(), $1, 'api', 'user', $2, $3, '{}')`,
      [new Date(BASE + 2 * HOUR), s.organization.id, customers[0]!.id],
    );
    await mergeRollups(em, s.organization.id);
    // This organization stops; a busy one ingests batch after batch, each merged as it commits.
    const busy = await usageSeller(srv);
    await call(srv, busy.token, 'POST', '/v1/meters/', { name: 'Busy', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    for (let k = 0; k < 20; k++) {
      await insertEvents(em.fork(), [{ organizationId: busy.organization.id, name: 'api', timestamp: new Date(BASE + k * 60_000), externalCustomerId: 'b-1' }]);
      await mergeRollups(em, busy.organization.id);
    }
    const kept = async () =>
      Number(
        (
          await runSql<{ n: string }>(
            em,
            `select count(*) as n from "events_xids" where "xid" in (select "xid" from "events" where "organization_id" = $1)`,
            [busy.organization.id],
          )
        ).rows[0]!.n,
      );
    // A transaction open elsewhere in the cluster holds back what a merge may drop: the next merges drop it.
    for (let tries = 0; tries < 50 && (await kept()) > 0; tries++) {
      await new Promise((r) => setTimeout(r, 200));
      await mergeRollups(em, busy.organization.id);
    }
    expect(await kept()).toBe(0);
    const range = `start_timestamp=${new Date(BASE).toISOString()}&end_timestamp=${new Date(BASE + 10 * HOUR).toISOString()}&interval=day`;
    const q = await call(srv, s.token, 'GET', `/v1/meters/${idle.body.id}/quantities?${range}`);
    expect(q.body.quantities).toEqual([{ timestamp: new Date(BASE).toISOString(), quantity: 1 }]);
  });

  it('stay exact under concurrent ingest through the API with merges running meanwhile', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    await runSql(em, 'delete from "meters" where "organization_id" = $1', [s.organization.id]);
    const created = await call(srv, s.token, 'POST', '/v1/meters/', {
      name: 'Concurrent',
      filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] },
      aggregation: { func: 'sum', property: 'a' },
    });
    const body = (k: number) => ({
      events: Array.from({ length: 25 }, (_, i) => ({
        name: i % 4 ? 'api' : 'upload',
        timestamp: new Date(BASE + (((k * 25 + i) * 1_234_567) % (SPAN_HOURS * HOUR))).toISOString(),
        ...(i % 5 ? { customer_id: customers[i % 3]!.id } : { external_customer_id: 'ext-9' }),
        metadata: { a: (k * 3 + i) % 11 },
      })),
    });
    let merging = true;
    const merger = (async () => {
      while (merging) await mergeRollups(srv.deps.orm.em.fork(), s.organization.id);
    })();
    const answers = await Promise.all(Array.from({ length: 16 }, (_, k) => call(srv, s.token, 'POST', '/v1/events/ingest', body(k))));
    merging = false;
    await merger;
    expect(answers.map((a) => a.status)).toEqual(Array(16).fill(200));
    expect(answers.reduce((n, a) => n + a.body.inserted, 0)).toBe(400);
    const q: GenQuery = { interval: 'hour', start: -HOUR / 3, length: SPAN_HOURS * HOUR, near: null, endNear: null, utcOffsetMinutes: 0, who: 'all' };
    await compare(created.body.id, q, []);
    await mergeRollups(em, s.organization.id);
    const { rows } = await runSql<{ rolled: string; raw: string }>(
      em,
      `select (select sum("vsum") from "meter_rollups" where "meter_id" = $1) as rolled,
              (select sum(("metadata" ->> 'a')::numeric) from "events" where "organization_id" = $2 and "name" = 'api') as raw`,
      [created.body.id, s.organization.id],
    );
    expect(Number(rows[0]!.rolled)).toBe(Number(rows[0]!.raw));
    await expectTotalsAgree(created.body.id);
    for (const who of ['all', 'c0', 'ext-9'] as const) await compare(created.body.id, { ...q, who }, []);
  });

  it('refuse a batch naming a deleted or foreign customer with a 422 at those indexes, writing nothing', async () => {
    const em = srv.deps.orm.em.fork();
    await runSql(em, 'delete from "events" where "organization_id" = $1', [s.organization.id]);
    const other = await usageSeller(srv);
    const foreign = await createCustomer(srv, other.organization.id, { externalId: null });
    const events = [
      { name: 'api', customer_id: customers[0]!.id },
      { name: 'api', customer_id: customers[3]!.id }, // soft-deleted
      { name: 'api', external_customer_id: 'ext-1' },
      { name: 'api', customer_id: foreign.id },
      { name: 'api', customer_id: customers[3]!.id },
    ];
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([1, 3, 4].map((i) => ['body', 'events', i, 'customer_id']));
    const { rows } = await runSql<{ n: string }>(em, 'select count(*) as n from "events" where "organization_id" = $1', [s.organization.id]);
    expect(Number(rows[0]!.n)).toBe(0);
    const ok = await call(srv, s.token, 'POST', '/v1/events/ingest', { events: [events[0], events[2]] });
    expect(ok.body).toEqual({ inserted: 2 });
  });
});
