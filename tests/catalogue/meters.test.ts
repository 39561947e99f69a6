/**
 * /v1/meters through the official SDK: CRUD, the events a meter matches, and quantities over
 * ingested events (count/sum/max/min/avg, nested and/or filters, JSON-type mismatches, empty
 * buckets, customer filters, intervals), tenant isolation; raw HTTP for the error bodies.
 */
import type { Polar } from '@polar-sh/sdk';
import type { Filter } from '@polar-sh/sdk/models/components/filter.js';
import type { MeterCreate } from '@polar-sh/sdk/models/components/metercreate.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createCustomer, usageSeller } from './events-helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

const at = (day: number, hour = 0, minute = 0, second = 0) => new Date(Date.UTC(2025, 0, day, hour, minute, second));
const all: Filter = { conjunction: 'and', clauses: [] };
const isApi: Filter = { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'api' }] };

describe('meter CRUD', () => {
  it('creates, reads, updates and lists meters; the SDK parses them', async () => {
    const s = await usageSeller(srv);
    const nested: Filter = {
      conjunction: 'and',
      clauses: [
        { property: 'name', operator: 'eq', value: 'api' },
        {
          conjunction: 'or',
          clauses: [
            { property: 'tokens', operator: 'gte', value: 10 },
            { property: 'premium', operator: 'eq', value: true },
          ],
        },
      ],
    };
    const created = await s.polar.meters.create({
      name: 'Beta tokens',
      filter: nested,
      aggregation: { func: 'sum', property: 'tokens' },
      metadata: { team: 'ml', tier: 2 },
    });
    expect(created).toMatchObject({
      name: 'Beta tokens',
      filter: nested,
      aggregation: { func: 'sum', property: 'tokens' },
      metadata: { team: 'ml', tier: 2 },
      organizationId: s.organization.id,
      modifiedAt: null,
    });
    expect(created.createdAt).toBeInstanceOf(Date);
    expect(await s.polar.meters.get({ id: created.id })).toEqual(created);

    const updated = await s.polar.meters.update({
      id: created.id,
      meterUpdate: { name: 'Beta calls', aggregation: { func: 'count' }, filter: isApi },
    });
    expect(updated).toMatchObject({ name: 'Beta calls', aggregation: { func: 'count' }, filter: isApi, metadata: { team: 'ml', tier: 2 } });
    expect(updated.modifiedAt).toBeInstanceOf(Date);

    await s.polar.meters.create({ name: 'Alpha', filter: all, aggregation: { func: 'count' }, metadata: { team: 'web' } });
    await s.polar.meters.create({ name: 'Gamma max', filter: all, aggregation: { func: 'max', property: 'n' } });
    const names = async (req: Parameters<Polar['meters']['list']>[0]) => (await s.polar.meters.list(req)).result.items.map((m) => m.name);
    expect(await names({ sorting: ['name'] })).toEqual(['Alpha', 'Beta calls', 'Gamma max']);
    expect(await names({ sorting: ['-name'] })).toEqual(['Gamma max', 'Beta calls', 'Alpha']);
    expect(await names({})).toEqual(['Gamma max', 'Alpha', 'Beta calls']);
    expect(await names({ query: 'BETA' })).toEqual(['Beta calls']);
    expect(await names({ metadata: { team: 'web' } })).toEqual(['Alpha']);
    expect(await names({ metadata: { team: ['web', 'ml'] }, sorting: ['name'] })).toEqual(['Alpha', 'Beta calls']);
    const page = await s.polar.meters.list({ limit: 2, page: 2, sorting: ['name'] });
    expect(page.result.items.map((m) => m.name)).toEqual(['Gamma max']);
    expect(page.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
  });

  it('validates filters and aggregations (422 with loc)', async () => {
    const s = await usageSeller(srv);
    const bad = async (body: unknown) => call(srv, s.token, 'POST', '/v1/meters/', body);
    const base = { name: 'Meter', filter: all, aggregation: { func: 'count' } };

    const op = await bad({ ...base, filter: { conjunction: 'and', clauses: [{ property: 'x', operator: 'contains', value: 'a' }] } });
    expect(op.status).toBe(422);
    expect(op.body.detail[0].loc.slice(0, 3)).toEqual(['body', 'filter', 'clauses']);
    expect((await bad({ ...base, filter: { conjunction: 'xor', clauses: [] } })).status).toBe(422);
    expect((await bad({ ...base, filter: { conjunction: 'and', clauses: [{ property: 'x', operator: 'eq', value: 1.5 }] } })).status).toBe(422);
    const noProperty = await bad({ ...base, aggregation: { func: 'sum' } });
    expect(noProperty.status).toBe(422);
    expect(noProperty.body.detail[0].loc).toEqual(['body', 'aggregation', 'property']);
    let deep: Filter = all;
    for (let i = 0; i < 10; i++) deep = { conjunction: 'or', clauses: [deep] };
    const tooDeep = await bad({ ...base, filter: deep });
    expect(tooDeep.status).toBe(422);
    expect(tooDeep.body.detail[0].loc.slice(0, 4)).toEqual(['body', 'filter', 'clauses', 0]);
    const clauses = Array.from({ length: 101 }, () => ({ property: 'x', operator: 'eq', value: 1 }));
    const tooMany = await bad({ ...base, filter: { conjunction: 'or', clauses } });
    expect(tooMany.body.detail[0].loc).toEqual(['body', 'filter']);
    const missing = await bad({ filter: all, aggregation: { func: 'count' } });
    expect(missing.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'missing' });
    const org = await bad({ ...base, organization_id: '00000000-0000-4000-8000-000000000000' });
    expect(org.status).toBe(422);
    expect(org.body.detail[0].loc).toEqual(['body', 'organization_id']);
  });

  it('refuses missing credentials (401) and tokens without the scope (403)', async () => {
    expect((await call(srv, null, 'GET', '/v1/meters/')).status).toBe(401);
    const readOnly = await usageSeller(srv, ['meters:read']);
    const res = await call(srv, readOnly.token, 'POST', '/v1/meters/', { name: 'Meter', filter: all, aggregation: { func: 'count' } });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
  });
});

describe('meter quantities', () => {
  let s: Awaited<ReturnType<typeof usageSeller>>;
  let other: Awaited<ReturnType<typeof usageSeller>>;
  let ann: { id: string };
  let ben: { id: string };

  beforeAll(async () => {
    s = await usageSeller(srv);
    other = await usageSeller(srv);
    ann = await createCustomer(srv, s.organization.id, { externalId: 'ann-ext' });
    ben = await createCustomer(srv, s.organization.id);
    await s.polar.events.ingest({
      events: [
        { name: 'api', customerId: ann.id, timestamp: at(1, 10), metadata: { tokens: 10, model: 'gpt-4', premium: true } },
        { name: 'api', externalCustomerId: 'ann-ext', timestamp: at(1, 11, 30), metadata: { tokens: 5, model: 'gpt-3.5' } },
        { name: 'api', customerId: ben.id, timestamp: at(1, 11, 45), metadata: { tokens: 100, model: 'gpt-4' } },
        { name: 'api', customerId: ann.id, timestamp: at(3, 9), metadata: { tokens: '7', model: 'claude' } },
        { name: 'upload', customerId: ann.id, timestamp: at(3, 9, 10), metadata: { tokens: 1000 } },
        { name: 'api', customerId: ben.id, timestamp: at(5, 23, 59, 59), metadata: { tokens: 1, premium: false } },
      ],
    });
    // Same names and external id in another organization: never counted for the first one.
    await other.polar.events.ingest({
      events: [{ name: 'api', externalCustomerId: 'ann-ext', timestamp: at(1, 10), metadata: { tokens: 999 } }],
    });
  });

  const meter = (body: Omit<MeterCreate, 'organizationId'>) => s.polar.meters.create(body);
  const daily = async (id: string, extra: { customerId?: string | string[]; externalCustomerId?: string | string[] } = {}) => {
    const res = await s.polar.meters.quantities({ id, startTimestamp: at(1), endTimestamp: at(5, 23, 59, 59), interval: 'day', ...extra });
    return res.quantities;
  };
  const values = async (...args: Parameters<typeof daily>) => (await daily(...args)).map((q) => q.quantity);

  it('counts per day with one bucket per step and 0 for empty steps', async () => {
    const m = await meter({ name: 'API calls', filter: isApi, aggregation: { func: 'count' } });
    const q = await daily(m.id);
    expect(q.map((b) => b.timestamp)).toEqual([at(1), at(2), at(3), at(4), at(5)]);
    expect(q.map((b) => b.quantity)).toEqual([3, 0, 1, 0, 1]);
  });

  it('sums, maxes, mins and averages numeric values only', async () => {
    const agg = (func: 'sum' | 'max' | 'min' | 'avg') => meter({ name: `tokens ${func}`, filter: isApi, aggregation: { func, property: 'tokens' } });
    // Day 3's only api event has tokens "7" (a string): it is left out, so that day is 0.
    expect(await values((await agg('sum')).id)).toEqual([115, 0, 0, 0, 1]);
    expect(await values((await agg('max')).id)).toEqual([100, 0, 0, 0, 1]);
    expect(await values((await agg('min')).id)).toEqual([5, 0, 0, 0, 1]);
    const avg = await values((await agg('avg')).id);
    expect(avg[0]).toBeCloseTo(115 / 3, 10);
    expect(avg.slice(1)).toEqual([0, 0, 0, 1]);
    // No filter: every event, including the upload.
    const sumAll = await meter({ name: 'all tokens', filter: all, aggregation: { func: 'sum', property: 'tokens' } });
    expect(await values(sumAll.id)).toEqual([115, 0, 1000, 0, 1]);
  });

  it('applies nested and/or groups', async () => {
    const m = await meter({
      name: 'premium gpt-4 or uploads',
      filter: {
        conjunction: 'or',
        clauses: [
          {
            conjunction: 'and',
            clauses: [
              { property: 'model', operator: 'eq', value: 'gpt-4' },
              { property: 'premium', operator: 'eq', value: true },
            ],
          },
          { property: 'name', operator: 'eq', value: 'upload' },
        ],
      },
      aggregation: { func: 'count' },
    });
    expect(await values(m.id)).toEqual([1, 0, 1, 0, 0]);
    const like = await meter({
      name: 'gpt calls',
      filter: {
        conjunction: 'and',
        clauses: [
          { property: 'name', operator: 'eq', value: 'api' },
          { property: 'model', operator: 'like', value: 'gpt' },
          { property: 'model', operator: 'not_like', value: '3.5' },
        ],
      },
      aggregation: { func: 'count' },
    });
    expect(await values(like.id)).toEqual([2, 0, 0, 0, 0]);
  });

  it('compares by JSON type: a string never equals a number, nor "true" a boolean', async () => {
    const m = (name: string, clause: Filter['clauses'][number]) =>
      meter({ name, filter: { conjunction: 'and', clauses: [clause] }, aggregation: { func: 'count' } });
    expect(await values((await m('tokens = 10', { property: 'tokens', operator: 'eq', value: 10 })).id)).toEqual([1, 0, 0, 0, 0]);
    expect(await values((await m('tokens = "10"', { property: 'tokens', operator: 'eq', value: '10' })).id)).toEqual([0, 0, 0, 0, 0]);
    expect(await values((await m('tokens = "7"', { property: 'tokens', operator: 'eq', value: '7' })).id)).toEqual([0, 0, 1, 0, 0]);
    expect(await values((await m('premium = "true"', { property: 'premium', operator: 'eq', value: 'true' })).id)).toEqual([0, 0, 0, 0, 0]);
    expect(await values((await m('premium != true', { property: 'premium', operator: 'ne', value: true })).id)).toEqual([0, 0, 0, 0, 1]);
    expect(await values((await m('tokens > 6', { property: 'tokens', operator: 'gt', value: 6 })).id)).toEqual([2, 0, 1, 0, 0]);
  });

  it('filters by customer id (also matching its external id), external id, or several', async () => {
    const m = await meter({ name: 'calls by customer', filter: isApi, aggregation: { func: 'count' } });
    expect(await values(m.id, { customerId: ann.id })).toEqual([2, 0, 1, 0, 0]);
    expect(await values(m.id, { externalCustomerId: 'ann-ext' })).toEqual([2, 0, 1, 0, 0]);
    expect(await values(m.id, { customerId: ben.id })).toEqual([1, 0, 0, 0, 1]);
    expect(await values(m.id, { customerId: [ann.id, ben.id] })).toEqual([3, 0, 1, 0, 1]);
  });

  it('buckets by hour, week (Mondays) and month', async () => {
    const m = await meter({ name: 'calls per step', filter: isApi, aggregation: { func: 'count' } });
    const hourly = await s.polar.meters.quantities({ id: m.id, startTimestamp: at(1, 10, 15), endTimestamp: at(1, 12), interval: 'hour' });
    // Buckets start at the step containing start_timestamp, but only events in [start, end] count:
    // the 10:00 call is before 10:15.
    expect(hourly.quantities).toEqual([
      { timestamp: at(1, 10), quantity: 0 },
      { timestamp: at(1, 11), quantity: 2 },
      { timestamp: at(1, 12), quantity: 0 },
    ]);
    const weekly = await s.polar.meters.quantities({ id: m.id, startTimestamp: at(1), endTimestamp: at(12), interval: 'week' });
    expect(weekly.quantities).toEqual([
      { timestamp: new Date(Date.UTC(2024, 11, 30)), quantity: 5 },
      { timestamp: at(6), quantity: 0 },
    ]);
    const monthly = await s.polar.meters.quantities({
      id: m.id,
      startTimestamp: at(1),
      endTimestamp: new Date(Date.UTC(2025, 2, 15)),
      interval: 'month',
    });
    expect(monthly.quantities.map((q) => q.quantity)).toEqual([5, 0, 0]);
    const yearly = await s.polar.meters.quantities({ id: m.id, startTimestamp: at(1), endTimestamp: at(31), interval: 'year' });
    expect(yearly.quantities).toEqual([{ timestamp: at(1), quantity: 5 }]);
  });

  it('follows an updated filter and aggregation', async () => {
    const m = await meter({ name: 'changing', filter: isApi, aggregation: { func: 'count' } });
    expect(await values(m.id)).toEqual([3, 0, 1, 0, 1]);
    await s.polar.meters.update({
      id: m.id,
      meterUpdate: { filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'upload' }] }, aggregation: { func: 'sum', property: 'tokens' } },
    });
    expect(await values(m.id)).toEqual([0, 0, 1000, 0, 0]);
  });

  it("lists a meter's matching events, newest first, with their customer", async () => {
    const m = await meter({ name: 'gpt-4 calls', filter: { conjunction: 'and', clauses: [{ property: 'model', operator: 'eq', value: 'gpt-4' }] }, aggregation: { func: 'count' } });
    const page = await s.polar.meters.events({ id: m.id });
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    expect(page.result.items.map((e) => [e.customerId, e.timestamp])).toEqual([
      [ben.id, at(1, 11, 45)],
      [ann.id, at(1, 10)],
    ]);
    expect(page.result.items[0]!.customer).toMatchObject({ id: ben.id });
    const everything = await s.polar.meters.events({ id: (await meter({ name: 'everything', filter: all, aggregation: { func: 'count' } })).id, limit: 4 });
    expect(everything.result.pagination).toEqual({ totalCount: 6, maxPage: 2 });
  });

  it('validates the query: required fields, order and the interval range limits', async () => {
    const m = await meter({ name: 'limits', filter: isApi, aggregation: { func: 'count' } });
    const q = (qs: string) => call(srv, s.token, 'GET', `/v1/meters/${m.id}/quantities?${qs}`);
    const missing = await q('interval=day');
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([['query', 'start_timestamp'], ['query', 'end_timestamp']]),
    );
    const range = (start: Date, end: Date, interval: string) =>
      q(`start_timestamp=${start.toISOString()}&end_timestamp=${end.toISOString()}&interval=${interval}`);
    const tooLong = await range(at(1), at(9), 'hour');
    expect(tooLong.status).toBe(422);
    expect(tooLong.body.detail[0].loc).toEqual(['query', 'end_timestamp']);
    expect((await range(at(1), at(8), 'hour')).status).toBe(200);
    expect((await range(at(5), at(1), 'day')).status).toBe(422);
    expect((await range(at(1), at(2), 'fortnight')).status).toBe(422);
  });

  it("keeps organizations apart: another organization's meter is 404 everywhere", async () => {
    const m = await meter({ name: 'private', filter: isApi, aggregation: { func: 'count' } });
    const qs = `start_timestamp=${at(1).toISOString()}&end_timestamp=${at(2).toISOString()}&interval=day`;
    for (const path of [`/v1/meters/${m.id}`, `/v1/meters/${m.id}/events`, `/v1/meters/${m.id}/quantities?${qs}`]) {
      const res = await call(srv, other.token, 'GET', path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'ResourceNotFound', detail: 'Meter not found' });
    }
    const patch = await call(srv, other.token, 'PATCH', `/v1/meters/${m.id}`, { name: 'stolen' });
    expect(patch.status).toBe(404);
    expect((await other.polar.meters.list({ organizationId: s.organization.id })).result.items).toEqual([]);
    // The other organization's own meter only sees its own event.
    const theirs = await other.polar.meters.create({ name: 'theirs', filter: isApi, aggregation: { func: 'sum', property: 'tokens' } });
    const q = await other.polar.meters.quantities({ id: theirs.id, startTimestamp: at(1), endTimestamp: at(1, 23), interval: 'day', externalCustomerId: 'ann-ext' });
    expect(q.quantities).toEqual([{ timestamp: at(1), quantity: 999 }]);
  });
});
