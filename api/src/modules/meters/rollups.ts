/**
 * Meter rollups (issue #22): hourly pre-aggregates of each meter's matching events, so quantities
 * read a few rows per hour and customer instead of every raw event.
 *
 * - Kept at ingestion: `ingestSql` extends the events INSERT with a data-modifying CTE that merges
 *   the batch's matching events into `meter_rollups` (one INSERT … ON CONFLICT DO UPDATE for all the
 *   organization's meters, rows in key order so concurrent batches lock them in the same order).
 *   A meter's filter is evaluated per event, so any filter and any aggregation is exact; late events
 *   simply land in their (past) hour.
 * - Built or rebuilt from the raw events by `rebuildRollup` (meter created, filter or aggregation
 *   changed, or rollups never built, e.g. meters from before this table). `meters.rollup` records
 *   the definition the rows reflect; a meter whose definition differs is rebuilt before it is read.
 * - Consistency with ingestion: ingest transactions hold the organization's rollup advisory lock in
 *   shared mode from before they read the meters until they commit; a rebuild holds it exclusively,
 *   so its scan sees every committed event and every later batch sees the rebuilt meter.
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

/**
 * Takes the ingest side of the organizations' rollup locks (in the caller's transaction) and
 * returns their meters whose rollups are built, with the definition those rollups follow.
 */
export async function rollupMetersForIngest(
  tx: EntityManager,
  organizationIds: string[],
): Promise<{ id: string; organization_id: string; rollup: MeterDefinition }[]> {
  const orgs = [...new Set(organizationIds)].sort();
  await runSql(
    tx,
    `select pg_advisory_xact_lock_shared(${lockKey('s.o')}) from (select o from unnest($1::uuid[]) o order by o) s`,
    [orgs],
  );
  const { rows } = await runSql<{ id: string; organization_id: string; rollup: MeterDefinition }>(
    tx,
    `select "id", "organization_id", "rollup" from "meters" where "organization_id" = any($1::uuid[]) and "rollup" is not null`,
    [orgs],
  );
  return rows;
}

/**
 * Wraps an `insert into "events" … ` statement (without RETURNING) so that the same statement
 * merges the inserted events into the given meters' rollups. Returns SQL whose single row holds the
 * number of events inserted (`n`).
 */
export function ingestSql(
  insertEvents: string,
  meters: { id: string; organization_id: string; rollup: MeterDefinition }[],
  params: SqlParams,
): string {
  const inserted = `${insertEvents} returning "timestamp", "organization_id", "customer_id", "external_customer_id", "name", "source", "metadata"`;
  if (!meters.length) return `with ins as (${inserted}) select count(*)::int as n from ins`;
  const selects = meters.map((m) => rollupSelect(m.id, m.organization_id, m.rollup, 'ins', params));
  return `with ins as (${inserted}),
    merged as (
      insert into "meter_rollups" as r (${ROLLUP_COLUMNS})
      select * from (${selects.join(' union all ')}) u order by 1, 2, 3, 4
      on conflict ("meter_id", "hour", "customer_id", "external_customer_id") do update set
        "n" = r."n" + excluded."n", "vn" = r."vn" + excluded."vn", "vsum" = r."vsum" + excluded."vsum",
        "vmin" = least(r."vmin", excluded."vmin"), "vmax" = greatest(r."vmax", excluded."vmax")
    )
    select count(*)::int as n from ins`;
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
  const { rows } = await runSql<{ timestamp: Date; quantity: number }>(
    em,
    `with buckets as (
       select generate_series(
         date_trunc(${interval}, ${start} at time zone 'UTC'),
         ${end} at time zone 'UTC',
         ('1 ' || ${interval})::interval
       ) as ts
     ), totals as (
       select p.ts, ${combineSql(q.definition.aggregation)} as quantity
       from (${parts.join(' union all ')}) p
       group by 1
     )
     select b.ts at time zone 'UTC' as "timestamp", coalesce(t.quantity, 0)::float8 as quantity
     from buckets b left join totals t on t.ts = b.ts
     order by b.ts`,
    params.values,
  );
  return rows;
}
