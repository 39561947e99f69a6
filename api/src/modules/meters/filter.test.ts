/**
 * The meter filter compiler: SQL shape (values only ever bound as parameters) and semantics, checked
 * by running the compiled SQL on PostgreSQL over generated events and comparing with a plain
 * reference implementation of the rules in NOTES-POLAR ("Meters and events").
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlParams } from '../events/sql.ts';
import type { Aggregation, Filter, FilterClause } from './entities.ts';
import { compileAggregation, compileFilter } from './filter.ts';

type Meta = Record<string, string | number | boolean>;
interface Ev {
  id: number;
  name: string;
  source: 'user' | 'system';
  customer_id: string | null;
  external_customer_id: string | null;
  timestamp: number; // unix seconds
  metadata: Meta;
}

// ---- reference semantics -------------------------------------------------------------------------

const COLUMNS = ['name', 'source', 'customer_id', 'external_customer_id', 'timestamp'] as const;

function columnValue(e: Ev, property: string): string | number | null | undefined {
  switch (property) {
    case 'name':
      return e.name;
    case 'source':
      return e.source;
    case 'customer_id':
      return e.customer_id;
    case 'external_customer_id':
      return e.external_customer_id;
    case 'timestamp':
      return e.timestamp;
    default:
      return undefined;
  }
}

function cmp(a: string | number | boolean, b: string | number | boolean): number {
  if (typeof a === 'boolean') return Number(a) - Number(b);
  if (typeof a === 'number') return a - (b as number);
  return a < (b as string) ? -1 : a > (b as string) ? 1 : 0;
}

function refClause(c: FilterClause, e: Ev): boolean {
  const vt = typeof c.value;
  const like = c.operator === 'like' || c.operator === 'not_like';
  if (like && vt !== 'string') return false;
  let stored: string | number | boolean | null | undefined;
  if ((COLUMNS as readonly string[]).includes(c.property)) stored = columnValue(e, c.property);
  else stored = Object.hasOwn(e.metadata, c.property) ? e.metadata[c.property] : undefined;
  if (stored === undefined || stored === null || typeof stored !== vt) return false;
  if (like) {
    const has = (stored as string).includes(c.value as string);
    return c.operator === 'like' ? has : !has;
  }
  const d = cmp(stored, c.value);
  switch (c.operator) {
    case 'eq':
      return d === 0;
    case 'ne':
      return d !== 0;
    case 'gt':
      return d > 0;
    case 'gte':
      return d >= 0;
    case 'lt':
      return d < 0;
    default:
      return d <= 0;
  }
}

function refFilter(f: Filter, e: Ev): boolean {
  if (f.clauses.length === 0) return true;
  const results = f.clauses.map((c) => ('conjunction' in c ? refFilter(c, e) : refClause(c, e)));
  return f.conjunction === 'and' ? results.every(Boolean) : results.some(Boolean);
}

function refAggregate(a: Aggregation, events: Ev[]): number {
  if (a.func === 'count') return events.length;
  const values = events.map((e) => e.metadata[a.property]).filter((v): v is number => typeof v === 'number');
  if (!values.length) return 0;
  switch (a.func) {
    case 'sum':
      return values.reduce((s, v) => s + v, 0);
    case 'max':
      return Math.max(...values);
    case 'min':
      return Math.min(...values);
    default:
      return values.reduce((s, v) => s + v, 0) / values.length;
  }
}

// ---- generators ----------------------------------------------------------------------------------

const CUSTOMERS = [randomUUID(), randomUUID()];
const strings = fc.constantFrom('', 'a', 'ab', 'b', 'api', 'API', 'x%', '_', 'zz', 'user');
const ints = fc.constantFrom(-5, 0, 1, 2, 10, 1_700_000_000);
const values = fc.oneof(strings, ints, fc.boolean());
const keys = fc.constantFrom('a', 'b', 'c', 'name');

const eventArb = fc.record({
  name: fc.constantFrom('api', 'api.call', 'upload', 'API'),
  source: fc.constantFrom('user' as const, 'system' as const),
  customer_id: fc.option(fc.constantFrom(...CUSTOMERS), { nil: null }),
  external_customer_id: fc.option(fc.constantFrom('ext-1', 'ext-2'), { nil: null }),
  timestamp: fc.integer({ min: 1_699_999_990, max: 1_700_000_010 }),
  metadata: fc.dictionary(fc.constantFrom('a', 'b', 'c'), values, { maxKeys: 3 }),
});

const clauseArb: fc.Arbitrary<FilterClause> = fc.record({
  property: fc.oneof(keys, fc.constantFrom('source', 'timestamp', 'customer_id', 'external_customer_id')),
  operator: fc.constantFrom('eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'like', 'not_like' as const),
  value: fc.oneof(values, fc.constantFrom(...CUSTOMERS), fc.integer({ min: 1_699_999_990, max: 1_700_000_010 })),
});

const { filter: filterArb } = fc.letrec<{ filter: Filter; clause: FilterClause | Filter }>((tie) => ({
  filter: fc.record({
    conjunction: fc.constantFrom('and' as const, 'or' as const),
    clauses: fc.array(tie('clause'), { maxLength: 4 }),
  }),
  clause: fc.oneof({ depthSize: 'small', withCrossShrink: true }, clauseArb, tie('filter')),
}));

const aggregationArb: fc.Arbitrary<Aggregation> = fc.oneof(
  fc.constant({ func: 'count' as const }),
  fc.record({ func: fc.constantFrom('sum' as const, 'max' as const, 'min' as const, 'avg' as const), property: fc.constantFrom('a', 'b', 'c') }),
);

// ---- running compiled SQL ------------------------------------------------------------------------

let client: pg.Client;
beforeAll(async () => {
  client = new pg.Client({ connectionString: process.env.DATABASE_URL_TEST });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
});

/** `events e` as a CTE over the given rows, so the compiled SQL runs exactly as on the table. */
function eventsCte(events: Ev[], params: SqlParams): string {
  return `with e_rows as (
    select * from unnest(
      ${params.add(events.map((e) => e.id), 'int[]')}, ${params.add(events.map((e) => e.name), 'text[]')},
      ${params.add(events.map((e) => e.source), 'text[]')}, ${params.add(events.map((e) => e.customer_id), 'uuid[]')},
      ${params.add(events.map((e) => e.external_customer_id), 'text[]')},
      ${params.add(events.map((e) => new Date(e.timestamp * 1000).toISOString()), 'timestamptz[]')},
      ${params.add(events.map((e) => JSON.stringify(e.metadata)), 'jsonb[]')}
    ) as t("id", "name", "source", "customer_id", "external_customer_id", "timestamp", "metadata"))`;
}

async function matchingIds(filter: Filter, events: Ev[]): Promise<number[]> {
  const params = new SqlParams();
  const cte = eventsCte(events, params);
  const where = compileFilter(filter, params, 'e.');
  const res = await client.query<{ id: number }>(`${cte} select e."id" from e_rows e where ${where} order by e."id"`, params.values);
  return res.rows.map((r) => r.id);
}

async function aggregate(a: Aggregation, filter: Filter, events: Ev[]): Promise<number> {
  const params = new SqlParams();
  const cte = eventsCte(events, params);
  const where = compileFilter(filter, params, 'e.');
  const agg = compileAggregation(a, params, 'e.');
  const res = await client.query<{ q: number }>(
    `${cte} select coalesce(${agg}, 0)::float8 as q from e_rows e where ${where}`,
    params.values,
  );
  return Number(res.rows[0]!.q);
}

const ev = (id: number, over: Partial<Ev> = {}): Ev => ({
  id,
  name: 'api',
  source: 'user',
  customer_id: null,
  external_customer_id: null,
  timestamp: 1_700_000_000,
  metadata: {},
  ...over,
});

// ---- tests ---------------------------------------------------------------------------------------

describe('compileFilter: SQL shape', () => {
  it('binds every property and value as a parameter, never in the SQL text', () => {
    const evil = `x'); drop table events; --`;
    const params = new SqlParams();
    const sql = compileFilter(
      {
        conjunction: 'or',
        clauses: [
          { property: evil, operator: 'eq', value: evil },
          { property: 'name', operator: 'like', value: evil },
          { conjunction: 'and', clauses: [{ property: 'k', operator: 'gt', value: 5 }] },
        ],
      },
      params,
      'e.',
    );
    expect(sql).not.toContain('drop table');
    expect(sql).not.toContain(evil);
    expect(params.values).toEqual([evil, evil, evil, 'k', 5]);
    expect(sql).toMatch(/\$1::text/);
  });

  it('compiles an empty group to true and a type mismatch on a column to false', () => {
    const params = new SqlParams();
    expect(compileFilter({ conjunction: 'and', clauses: [] }, params)).toBe('true');
    expect(compileFilter({ conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 'x' }] }, new SqlParams(), 'e.')).toBe(
      'e."name" = $1::text',
    );
    expect(compileFilter({ conjunction: 'or', clauses: [] }, params)).toBe('true');
    expect(compileFilter({ conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: 3 }] }, params)).toBe('false');
    expect(compileFilter({ conjunction: 'and', clauses: [{ property: 'k', operator: 'like', value: true }] }, params)).toBe('false');
    expect(params.values).toEqual([]);
  });

  it('aggregates count(*) or a numeric-only CASE over the metadata key', () => {
    const params = new SqlParams();
    expect(compileAggregation({ func: 'count' }, params)).toBe('count(*)');
    const sql = compileAggregation({ func: 'sum', property: 'tokens' }, params, 'e.');
    expect(sql).toMatch(/^sum\(case when jsonb_typeof/);
    expect(params.values).toEqual(['tokens']);
  });
});

describe('compileFilter: semantics on PostgreSQL', () => {
  it('compares by the JSON type of the stored value', async () => {
    const events = [
      ev(1, { metadata: { n: 5 } }),
      ev(2, { metadata: { n: '5' } }),
      ev(3, { metadata: { n: true } }),
      ev(4, { metadata: {} }),
      ev(5, { metadata: { n: 10 } }),
    ];
    const one = (clause: FilterClause) => matchingIds({ conjunction: 'and', clauses: [clause] }, events);
    expect(await one({ property: 'n', operator: 'eq', value: 5 })).toEqual([1]);
    expect(await one({ property: 'n', operator: 'eq', value: '5' })).toEqual([2]);
    expect(await one({ property: 'n', operator: 'eq', value: true })).toEqual([3]);
    // ne only matches values of the same type; a missing key or another type is false.
    expect(await one({ property: 'n', operator: 'ne', value: 5 })).toEqual([5]);
    expect(await one({ property: 'n', operator: 'gte', value: 5 })).toEqual([1, 5]);
    expect(await one({ property: 'n', operator: 'lt', value: 6 })).toEqual([1]);
    // Numbers compare numerically, not as text ("10" < "5" as text).
    expect(await one({ property: 'n', operator: 'gt', value: 9 })).toEqual([5]);
  });

  it('treats like / not_like as case-sensitive contains, with no wildcards', async () => {
    const events = [
      ev(1, { metadata: { path: '/api/v1/users' } }),
      ev(2, { metadata: { path: '/API/v1' } }),
      ev(3, { metadata: { path: '100%_done' } }),
      ev(4, { metadata: { path: 42 } }),
    ];
    const one = (clause: FilterClause) => matchingIds({ conjunction: 'and', clauses: [clause] }, events);
    expect(await one({ property: 'path', operator: 'like', value: 'api' })).toEqual([1]);
    expect(await one({ property: 'path', operator: 'not_like', value: 'api' })).toEqual([2, 3]);
    expect(await one({ property: 'path', operator: 'like', value: '%_' })).toEqual([3]);
    expect(await one({ property: 'path', operator: 'like', value: '_' })).toEqual([3]);
  });

  it('reads event columns before metadata and compares timestamp as Unix seconds', async () => {
    const events = [
      ev(1, { name: 'api.call', metadata: { name: 'other' }, timestamp: 1_700_000_000 }),
      ev(2, { name: 'upload', source: 'system', timestamp: 1_700_000_100 }),
    ];
    const one = (clause: FilterClause) => matchingIds({ conjunction: 'and', clauses: [clause] }, events);
    expect(await one({ property: 'name', operator: 'eq', value: 'api.call' })).toEqual([1]);
    expect(await one({ property: 'name', operator: 'eq', value: 'other' })).toEqual([]);
    expect(await one({ property: 'source', operator: 'eq', value: 'system' })).toEqual([2]);
    expect(await one({ property: 'timestamp', operator: 'gt', value: 1_700_000_050 })).toEqual([2]);
    expect(await one({ property: 'timestamp', operator: 'gt', value: '1700000050' })).toEqual([]);
    // Out of PostgreSQL's timestamp range: still a plain comparison, never an error.
    expect(await one({ property: 'timestamp', operator: 'lt', value: Number.MAX_SAFE_INTEGER })).toEqual([1, 2]);
    expect(await one({ property: 'timestamp', operator: 'gt', value: -Number.MAX_SAFE_INTEGER })).toEqual([1, 2]);
    expect(await one({ property: 'timestamp', operator: 'eq', value: Number.MAX_SAFE_INTEGER })).toEqual([]);
  });

  it('combines nested and/or groups', async () => {
    const events = [
      ev(1, { name: 'api', metadata: { tier: 'pro', n: 1 } }),
      ev(2, { name: 'api', metadata: { tier: 'free', n: 50 } }),
      ev(3, { name: 'upload', metadata: { tier: 'pro', n: 50 } }),
      ev(4, { name: 'api', metadata: { tier: 'free', n: 2 } }),
    ];
    const filter: Filter = {
      conjunction: 'and',
      clauses: [
        { property: 'name', operator: 'eq', value: 'api' },
        {
          conjunction: 'or',
          clauses: [
            { property: 'tier', operator: 'eq', value: 'pro' },
            { property: 'n', operator: 'gte', value: 10 },
          ],
        },
      ],
    };
    expect(await matchingIds(filter, events)).toEqual([1, 2]);
  });

  it('aggregates numeric values only; nothing numeric gives 0', async () => {
    const events = [ev(1, { metadata: { t: 4 } }), ev(2, { metadata: { t: '100' } }), ev(3, { metadata: { t: 8 } }), ev(4)];
    const all: Filter = { conjunction: 'and', clauses: [] };
    expect(await aggregate({ func: 'count' }, all, events)).toBe(4);
    expect(await aggregate({ func: 'sum', property: 't' }, all, events)).toBe(12);
    expect(await aggregate({ func: 'max', property: 't' }, all, events)).toBe(8);
    expect(await aggregate({ func: 'min', property: 't' }, all, events)).toBe(4);
    expect(await aggregate({ func: 'avg', property: 't' }, all, events)).toBe(6);
    expect(await aggregate({ func: 'sum', property: 'missing' }, all, events)).toBe(0);
  });

  it('matches the reference semantics on generated filters and events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 12 }), filterArb, aggregationArb, async (raw, filter, agg) => {
        const events = raw.map((e, i) => ({ ...e, id: i + 1 }));
        const expected = events.filter((e) => refFilter(filter, e)).map((e) => e.id);
        expect(await matchingIds(filter, events)).toEqual(expected);
        const matched = events.filter((e) => expected.includes(e.id));
        expect(await aggregate(agg, filter, events)).toBeCloseTo(refAggregate(agg, matched), 6);
      }),
      { numRuns: 300 },
    );
  });
});
