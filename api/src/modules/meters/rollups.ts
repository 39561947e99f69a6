/**
 * Meter rollups (issue #22): hourly pre-aggregates of each meter's matching events, so quantities
 * read a few rows per hour and customer instead of every raw event.
 *
 * - Kept at ingestion: the one ingest statement (`ingestSql`) inserts the batch and merges its
 *   matching events into `meter_rollups` through a data-modifying CTE (one INSERT … ON CONFLICT DO
 *   UPDATE for all the organization's meters, rows in key order so concurrent batches lock them in
 *   the same order). A meter's filter is evaluated per event, so any filter and any aggregation is
 *   exact; late events simply land in their (past) hour. The meter definitions come from a
 *   per-process cache (`ingestMeters`), checked inside the statement by `meter_rollups_guard`.
 * - Built or rebuilt from the raw events by `rebuildRollup` (meter created, filter or aggregation
 *   changed, or rollups never built, e.g. meters from before this table). `meters.rollup` records
 *   the definition the rows reflect; a meter whose definition differs is rebuilt before it is read.
 * - Consistency with ingestion: ingest statements hold the organization's rollup advisory lock in
 *   shared mode until they commit (taken by `meter_rollups_guard`, which then checks with a fresh
 *   snapshot that the definitions the statement carries are those the rollups follow, else fails
 *   the statement with P0R01); a rebuild holds it exclusively, so its scan sees every committed
 *   event and every later batch carries the rebuilt meter.
 * - Reads (`rollupQuantities`): whole UTC hours from the rollups, the partial hours at either end
 *   of the range (start or end not on an hour boundary; the end is inclusive) from the raw events,
 *   combined per bucket with the same arithmetic as the raw aggregation (count = Σn, sum = Σvsum,
 *   min/max of the parts, avg = Σvsum / Σvn in numeric), so the result equals a raw scan exactly.
 */
import type { EntityManager } from '../../kit/db.ts';
import { runSql, SqlParams } from '../events/sql.ts';
import type { Aggregation, Filter, MeterDefinition } from './entities.ts';
import { compileFilter } from './filter.ts';

const HOUR = 3_600_000;

/** Advisory lock key of an organization's rollups (a SQL expression over a uuid placeholder). */
const lockKey = (org: string) => `hashtextextended('meter-rollups:' || ${org}::text, 0)`;

/** Runs `work` in a transaction: the caller's when one is open, else a new one. */
export async function inOwnTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  if (em.isInTransaction()) return work(em);
  return em.transactional((tx) => work(tx));
}

/** The numeric value of the aggregation property (NULL when missing or not a number), on alias `e.`. */
function valueSql(aggregation: Aggregation, params: SqlParams): string {
  if (aggregation.func === 'count') return 'null::numeric';
  const key = params.add(aggregation.property, 'text');
  return `case when jsonb_typeof(e."metadata" -> ${key}) = 'number' then (e."metadata" ->> ${key})::numeric end`;
}

/** Per (hour, customer_id, external_customer_id): the partial aggregates of a meter over `source e`. */
function rollupSelect(meterId: string, organizationId: string, def: MeterDefinition, source: string, params: SqlParams): string {
  return `select ${params.add(meterId, 'uuid')} as meter_id, date_trunc('hour', e."timestamp", 'UTC') as hour,
      e."customer_id", e."external_customer_id", count(*) as n, count(x.v) as vn, coalesce(sum(x.v), 0) as vsum,
      min(x.v) as vmin, max(x.v) as vmax
    from ${source} e cross join lateral (select ${valueSql(def.aggregation, params)} as v) x
    where e."organization_id" = ${params.add(organizationId, 'uuid')} and ${compileFilter(def.filter, params, 'e.')}
    group by 2, 3, 4`;
}

const ROLLUP_COLUMNS = '"meter_id", "hour", "customer_id", "external_customer_id", "n", "vn", "vsum", "vmin", "vmax"';

export interface IngestMeter {
  id: string;
  organization_id: string;
  rollup: MeterDefinition;
}

/** An organization's meters whose rollups are built, and their fingerprint (`meter_rollups_fingerprint`). */
interface OrganizationMeters {
  fingerprint: string;
  meters: IngestMeter[];
}

/**
 * The meter definitions ingestion last read, per organization. Never trusted on its own: every
 * ingest statement carries the fingerprints it was built from and `meter_rollups_guard` checks them
 * under the rollup locks, so a stale entry costs one failed statement and a reload.
 */
const ingestCache = new Map<string, OrganizationMeters>();
const INGEST_CACHE_MAX = 10_000;

/** SQLSTATE raised by `meter_rollups_guard` when the definitions a statement carries are stale. */
export const STALE_METERS = 'P0R01';

async function loadIngestMeters(em: EntityManager, orgs: string[]): Promise<Map<string, OrganizationMeters>> {
  const { rows } = await runSql<{ organization_id: string; fingerprint: string; meters: { id: string; rollup: MeterDefinition }[] }>(
    em,
    `select o::text as organization_id, "meter_rollups_fingerprint"(o) as fingerprint,
       coalesce((select json_agg(json_build_object('id', m."id", 'rollup', m."rollup") order by m."id") from "meters" m
                 where m."organization_id" = o and m."rollup" is not null), '[]') as meters
     from unnest($1::uuid[]) o`,
    [orgs],
  );
  const out = new Map<string, OrganizationMeters>();
  for (const r of rows) {
    out.set(r.organization_id, {
      fingerprint: r.fingerprint,
      meters: r.meters.map((m) => ({ id: m.id, organization_id: r.organization_id, rollup: m.rollup })),
    });
  }
  return out;
}

/**
 * The organizations' meters whose rollups are built (the definitions they follow) and the
 * fingerprints an ingest statement passes to `meter_rollups_guard`.
 * - `cached`: from this process's cache (read on a miss); the guard in the statement verifies them.
 * - `locked`: takes the ingest side of the rollup locks first (in the caller's open transaction)
 *   and reads them fresh, so the guard cannot fail (for writes inside a larger transaction).
 */
export async function ingestMeters(
  em: EntityManager,
  organizationIds: string[],
  mode: 'cached' | 'locked',
): Promise<{ meters: IngestMeter[]; orgs: string[]; fingerprints: string[] }> {
  const orgs = [...new Set(organizationIds)].sort();
  let found: Map<string, OrganizationMeters>;
  if (mode === 'locked') {
    await runSql(em, `select pg_advisory_xact_lock_shared(${lockKey('s.o')}) from (select o from unnest($1::uuid[]) o order by o) s`, [orgs]);
    found = await loadIngestMeters(em, orgs);
  } else {
    const missing = orgs.filter((o) => !ingestCache.has(o));
    if (missing.length) {
      if (ingestCache.size + missing.length > INGEST_CACHE_MAX) ingestCache.clear();
      for (const [org, entry] of await loadIngestMeters(em, missing)) ingestCache.set(org, entry);
    }
    found = ingestCache;
  }
  const entries = orgs.map((o) => found.get(o) ?? { fingerprint: '', meters: [] });
  return { meters: entries.flatMap((e) => e.meters), orgs, fingerprints: entries.map((e) => e.fingerprint) };
}

/** Drops cached meter definitions (after the guard found them stale). */
export function forgetIngestMeters(organizationIds: string[]): void {
  for (const o of organizationIds) ingestCache.delete(o);
}

/**
 * The single ingest statement: `rows` is a SQL source of the batch (columns ts, name, org, customer,
 * external, metadata, i), `bad` a query over it giving the indexes `i` of events that must not be
 * written (then nothing is). The statement runs `meter_rollups_guard` before writing, inserts the
 * events and merges them into the given meters' rollups (one INSERT … ON CONFLICT DO UPDATE for all
 * of them, rows in key order so concurrent batches lock them in the same order). Its one row holds
 * the number inserted (`n`) and the refused indexes (`bad`).
 */
export function ingestSql(
  q: { rows: string; bad: string; createdAt: string; source: string; meters: IngestMeter[]; orgs: string[]; fingerprints: string[] },
  params: SqlParams,
): string {
  const guard = `"meter_rollups_guard"(${params.add(q.orgs, 'uuid[]')}, ${params.add(q.fingerprints, 'text[]')})`;
  const insert = `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata")
    select gen_random_uuid(), ${q.createdAt}, t.ts, t.name, ${q.source}, t.org, t.customer, t.external, coalesce(t.metadata, '{}'::jsonb)
    from t cross join guard where guard.ok and not exists (select 1 from bad)
    returning "timestamp", "organization_id", "customer_id", "external_customer_id", "name", "source", "metadata"`;
  const selects = q.meters.map((m) => rollupSelect(m.id, m.organization_id, m.rollup, 'ins', params));
  const merge = selects.length
    ? `, merged as (
      insert into "meter_rollups" as r (${ROLLUP_COLUMNS})
      select * from (${selects.join(' union all ')}) u order by 1, 2, 3, 4
      on conflict ("meter_id", "hour", "customer_id", "external_customer_id") do update set
        "n" = r."n" + excluded."n", "vn" = r."vn" + excluded."vn", "vsum" = r."vsum" + excluded."vsum",
        "vmin" = least(r."vmin", excluded."vmin"), "vmax" = greatest(r."vmax", excluded."vmax")
    )`
    : '';
  return `with t as materialized (${q.rows}),
    bad as (${q.bad}),
    guard as materialized (select ${guard} as ok),
    ins as (${insert})${merge}
    select (select count(*) from ins)::int as n, coalesce((select array_agg(b.i order by b.i) from bad b), '{}') as bad`;
}

/**
 * Rebuilds a meter's rollups from its raw events for its current definition, holding its
 * organization's rollup lock exclusively (waits for in-flight ingest batches, holds new ones until
 * commit). Runs in the caller's transaction or its own.
 */
export async function rebuildRollup(em: EntityManager, meterId: string): Promise<void> {
  await inOwnTransaction(em, async (tx) => {
    const { rows: owner } = await runSql<{ organization_id: string }>(tx, 'select "organization_id" from "meters" where "id" = $1', [meterId]);
    if (!owner[0]) return;
    await runSql(tx, `select pg_advisory_xact_lock(${lockKey('$1::uuid')})`, [owner[0].organization_id]);
    const { rows } = await runSql<{ organization_id: string; filter: Filter; aggregation: Aggregation }>(
      tx,
      'select "organization_id", "filter", "aggregation" from "meters" where "id" = $1 for update',
      [meterId],
    );
    const meter = rows[0];
    if (!meter) return;
    await runSql(tx, 'delete from "meter_rollups" where "meter_id" = $1', [meterId]);
    const params = new SqlParams();
    const select = rollupSelect(meterId, meter.organization_id, meter, '"events"', params);
    await runSql(tx, `insert into "meter_rollups" (${ROLLUP_COLUMNS}) ${select}`, params.values);
    await runSql(
      tx,
      `update "meters" set "rollup" = jsonb_build_object('filter', "filter", 'aggregation', "aggregation") where "id" = $1`,
      [meterId],
    );
  });
}

/** Whether the meter's rollups follow its current filter and aggregation. */
export async function rollupIsCurrent(em: EntityManager, meterId: string): Promise<boolean> {
  const { rows } = await runSql<{ current: boolean }>(
    em,
    `select coalesce("rollup" = jsonb_build_object('filter', "filter", 'aggregation', "aggregation"), false) as current
     from "meters" where "id" = $1`,
    [meterId],
  );
  return rows[0]?.current ?? false;
}

/**
 * A statement giving one row per interval step (UTC) from the step containing `start` to the one
 * containing `end`, with the quantity `totals` (columns ts, quantity) has for it, else 0. The
 * rollup and the raw-scan queries both answer through it.
 */
export function bucketedQuantitiesSql(interval: string, start: string, end: string, totals: string): string {
  return `with buckets as (
       select generate_series(
         date_trunc(${interval}, ${start} at time zone 'UTC'),
         ${end} at time zone 'UTC',
         ('1 ' || ${interval})::interval
       ) as ts
     ), totals as (${totals})
     select b.ts at time zone 'UTC' as "timestamp", coalesce(t.quantity, 0)::float8 as quantity
     from buckets b left join totals t on t.ts = b.ts
     order by b.ts`;
}

/** The final aggregate over partial aggregates (n, vn, vsum, vmin, vmax) of one bucket. */
function combineSql(aggregation: Aggregation): string {
  switch (aggregation.func) {
    case 'count':
      return 'sum(p.n)';
    case 'sum':
      return 'sum(p.vsum)';
    case 'max':
      return 'max(p.vmax)';
    case 'min':
      return 'min(p.vmin)';
    case 'avg':
      return 'sum(p.vsum) / nullif(sum(p.vn), 0)';
  }
}

export interface RollupQuery {
  meterId: string;
  organizationId: string;
  definition: MeterDefinition;
  start: Date;
  end: Date;
  interval: string;
  /** Conditions on `e` (organization, customers) from `eventConditions`, values in `params`. */
  conditions: string[];
  params: SqlParams;
}

/**
 * Quantities per bucket (same rows as the raw query): whole hours of [start, end] from the
 * rollups, the partial hours at the ends from the raw events.
 */
export async function rollupQuantities(em: EntityManager, q: RollupQuery): Promise<{ timestamp: Date; quantity: number }[]> {
  const { params } = q;
  const interval = params.add(q.interval, 'text');
  const start = params.add(q.start.toISOString(), 'timestamptz');
  const end = params.add(q.end.toISOString(), 'timestamptz');
  // Whole hours [fullStart, fullEnd): every instant of them lies in [start, end].
  const fullStart = new Date(Math.ceil(q.start.getTime() / HOUR) * HOUR);
  const fullEnd = new Date(Math.floor(q.end.getTime() / HOUR) * HOUR);
  const customer = q.conditions.join(' and ');
  const filter = compileFilter(q.definition.filter, params, 'e.');
  const value = valueSql(q.definition.aggregation, params);
  const raw = (range: string) =>
    `select date_trunc(${interval}, e."timestamp" at time zone 'UTC') as ts, 1::bigint as n, (x.v is not null)::int::bigint as vn,
       coalesce(x.v, 0) as vsum, x.v as vmin, x.v as vmax
     from "events" e cross join lateral (select ${value} as v) x
     where ${range} and ${customer} and ${filter}`;
  const parts: string[] = [];
  if (fullStart < fullEnd) {
    const hs = params.add(fullStart.toISOString(), 'timestamptz');
    const he = params.add(fullEnd.toISOString(), 'timestamptz');
    parts.push(
      `select date_trunc(${interval}, e."hour" at time zone 'UTC') as ts, e."n", e."vn", e."vsum", e."vmin", e."vmax"
       from (select r.*, ${params.add(q.organizationId, 'uuid')} as "organization_id" from "meter_rollups" r
             where r."meter_id" = ${params.add(q.meterId, 'uuid')} and r."hour" >= ${hs} and r."hour" < ${he}) e
       where ${customer}`,
    );
    if (q.start < fullStart) parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" < ${hs}`));
    parts.push(raw(`e."timestamp" >= ${he} and e."timestamp" <= ${end}`));
  } else {
    parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" <= ${end}`));
  }
  const totals = `select p.ts, ${combineSql(q.definition.aggregation)} as quantity from (${parts.join(' union all ')}) p group by 1`;
  const { rows } = await runSql<{ timestamp: Date; quantity: number }>(em, bucketedQuantitiesSql(interval, start, end, totals), params.values);
  return rows;
}
