// Over 400 lines: the merge, the rebuild and both reads of the four rollup tables share these SQL builders.
/**
 * Meter rollups (issue #22): hourly pre-aggregates of each meter's matching events, so quantities
 * read a few rows per hour and customer instead of every raw event.
 *
 * - Merged after commit, off the ingest request: every event row records the id of the transaction
 *   that wrote it (`events.xid`, a column default), and every meter the snapshot whose committed
 *   events its rollups hold (`meters.rolled_snapshot`). `mergeRollups` (scheduled by `scheduleMerge`
 *   once an ingest has committed, coalescing the batches that commit meanwhile) takes a fresh
 *   snapshot, merges each meter's events visible in it but not in its `rolled_snapshot` (one
 *   INSERT … ON CONFLICT DO UPDATE, rows in key order) and stores the new snapshot in the same
 *   transaction. A crash between an ingest's commit and its merge loses nothing (the events wait,
 *   counted by reads, for the next merge) and counts nothing twice (rollups and snapshot move
 *   together). A transaction open for long elsewhere does not hold merges back (visibility is per
 *   transaction, not a horizon). A meter's filter is evaluated per event, so any filter and any
 *   aggregation is exact; late events land in their (past) hour.
 * - Built or rebuilt from the raw events by `rebuildRollup` (meter created, filter or aggregation
 *   changed, or never built): every event visible in a fresh snapshot. `meters.rollup` records the
 *   definition the rows reflect; a meter whose definition differs is rebuilt before it is read.
 *   Merges and rebuilds of an organization take its rollup advisory lock; ingestion takes none.
 * - Four tables, written together by one statement (`writeRollupsSql`): per hour and customer
 *   (`meter_rollups`), per hour (`meter_rollup_totals`), per UTC day and customer
 *   (`meter_rollup_days`), per UTC minute (`meter_rollup_minutes`).
 * - Reads (`rollupQuantities`, `quantities-read.ts`): for one customer whole UTC days from the day
 *   rows (intervals of a day or longer) and whole hours at the partial days; for all customers whole
 *   hours from the totals and whole minutes at the partial hours (`rollupSpans`); plus the events of
 *   those spans not merged yet (xid at or above `rolled_snapshot`'s xmax or in progress in it: a BRIN
 *   index on xid finds them), the partial hour (one customer) or minute (all) at either end of the
 *   range (the end is inclusive) from the raw events, combined per bucket with the same arithmetic as the raw
 *   aggregation (count = Σn, sum = Σvsum, min/max of the parts, avg = Σvsum / Σvn in numeric), so
 *   the result equals a raw scan exactly. The statement re-reads `rolled_snapshot` in its own
 *   snapshot; a merge that committed since the caller read it makes the caller read it again.
 */
import type { EntityManager } from '../../kit/db.ts';
import { runSql, SqlParams } from '../events/sql.ts';
import type { Aggregation, Filter, MeterDefinition } from './entities.ts';
import { compileFilter } from './filter.ts';

const HOUR = 3_600_000;

/** Advisory lock key of an organization's rollups (a SQL expression over a uuid placeholder). */
const lockKey = (org: string) => `hashtextextended('meter-rollups:' || ${org}::text, 0)`;

/**
 * Whether event `e`'s transaction is invisible to a snapshot (text form `xmin:xmax:xip,…`, as
 * `pg_current_snapshot()` prints it): at or above its xmax, or in progress when it was taken. Plain
 * comparisons on `e.xid`, so the BRIN index on xid serves them (null xids predate every snapshot).
 */
function unseenBy(snapshot: string, params: SqlParams): string {
  const [xmin, xmax, xip] = snapshot.split(':');
  const inProgress = xip ? xip.split(',') : [];
  const after = `e."xid" >= ${params.add(xmax, 'bigint')}`;
  if (!inProgress.length) return after;
  // Equalities, not `= any(array)`, so that each one is a BRIN scan of its own (a BitmapOr).
  if (inProgress.length <= 32) return `(${[after, ...inProgress.map((x) => `e."xid" = ${params.add(x, 'bigint')}`)].join(' or ')})`;
  return `(e."xid" >= ${params.add(xmin, 'bigint')} and (${after} or e."xid" = any(${params.add(inProgress, 'bigint[]')})))`;
}

/** Runs `work` in a transaction: the caller's when one is open, else a new one. */
export async function inOwnTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  if (em.isInTransaction()) return work(em);
  return em.transactional((tx) => work(tx));
}

/** The numeric value of the aggregation property (NULL when missing or not a number), on alias `e.`. */
export function valueSql(aggregation: Aggregation, params: SqlParams): string {
  if (aggregation.func === 'count') return 'null::numeric';
  const key = params.add(aggregation.property, 'text');
  return `case when jsonb_typeof(e."metadata" -> ${key}) = 'number' then (e."metadata" ->> ${key})::numeric end`;
}

/**
 * The partial aggregates of a meter over `source e` where `extra`, in one pass: per (hour,
 * customer_id, external_customer_id) with `minute` null, and per UTC minute (all customers) with
 * `hour` null; `writeRollupsSql` writes them.
 */
function rollupSelect(meterId: string, organizationId: string, def: MeterDefinition, source: string, extra: string, params: SqlParams): string {
  return `select ${params.add(meterId, 'uuid')}::uuid as meter_id, date_trunc('hour', e."timestamp", 'UTC') as hour,
      date_trunc('minute', e."timestamp", 'UTC') as minute,
      e."customer_id", e."external_customer_id", count(*) as n, count(x.v) as vn, coalesce(sum(x.v), 0) as vsum,
      min(x.v) as vmin, max(x.v) as vmax
    from ${source} e cross join lateral (select ${valueSql(def.aggregation, params)} as v) x
    where e."organization_id" = ${params.add(organizationId, 'uuid')} and ${extra} and ${compileFilter(def.filter, params, 'e.')}
    group by grouping sets ((2, 4, 5), (3))`;
}

const ROLLUP_COLUMNS = '"meter_id", "hour", "customer_id", "external_customer_id", "n", "vn", "vsum", "vmin", "vmax"';
const TOTAL_COLUMNS = '"meter_id", "hour", "n", "vn", "vsum", "vmin", "vmax"';
const DAY_COLUMNS = '"meter_id", "day", "customer_id", "external_customer_id", "n", "vn", "vsum", "vmin", "vmax"';
const MINUTE_COLUMNS = '"meter_id", "minute", "n", "vn", "vsum", "vmin", "vmax"';
/** Adds the partial aggregates of `excluded` to the row `r` (count, sum, min and max compose). */
const MERGE_SET = `"n" = r."n" + excluded."n", "vn" = r."vn" + excluded."vn", "vsum" = r."vsum" + excluded."vsum",
  "vmin" = least(r."vmin", excluded."vmin"), "vmax" = greatest(r."vmax", excluded."vmax")`;
/**
 * One statement writing the rows of `rollupSelect`s (the materialized CTE `u`) into the four rollup
 * tables: per hour and customer, per hour (their sums), per UTC day and customer (the hours' sums
 * per day), per minute. Rows are merged into existing ones (ON CONFLICT), in key order. `tail` is
 * appended as more CTEs; the statement answers the number of hourly rows written.
 */
function writeRollupsSql(selects: string[], tail = ''): string {
  const hours = `(select * from u where u.minute is null) h`;
  return `with u as materialized (${selects.join(' union all ')}), merged as (
      insert into "meter_rollups" as r (${ROLLUP_COLUMNS})
      select meter_id, hour, customer_id, external_customer_id, n, vn, vsum, vmin, vmax from ${hours} order by 1, 2, 3, 4
      on conflict ("meter_id", "hour", "customer_id", "external_customer_id") do update set ${MERGE_SET}
      returning 1
    ), totals as (
      insert into "meter_rollup_totals" as r (${TOTAL_COLUMNS})
      select meter_id, hour, sum(n), sum(vn), sum(vsum), min(vmin), max(vmax) from ${hours} group by 1, 2 order by 1, 2
      on conflict ("meter_id", "hour") do update set ${MERGE_SET}
    ), days as (
      insert into "meter_rollup_days" as r (${DAY_COLUMNS})
      select meter_id, date_trunc('day', hour, 'UTC'), customer_id, external_customer_id, sum(n), sum(vn), sum(vsum), min(vmin), max(vmax)
      from ${hours} group by 1, 2, 3, 4 order by 1, 2, 3, 4
      on conflict ("meter_id", "day", "customer_id", "external_customer_id") do update set ${MERGE_SET}
    ), minutes as (
      insert into "meter_rollup_minutes" as r (${MINUTE_COLUMNS})
      select meter_id, minute, n, vn, vsum, vmin, vmax from u where u.minute is not null order by 1, 2
      on conflict ("meter_id", "minute") do update set ${MERGE_SET}
    )${tail}
    select count(*)::int as n from merged`;
}

/**
 * Drops the organization's rows of `events_xids` below the xmin of every rolled_snapshot of its
 * meters, which no read's unmerged tail can hold: `now` for the meters `moved` is taking there (the
 * statement itself still sees their old snapshots), the stored snapshot for the others. With no
 * built meter, below `now`'s xmin: a meter built later takes a snapshot whose xmin is not lower.
 */
const trimXids = (org: string, now: string, moved: string) => `delete from "events_xids" x
  where x."organization_id" = ${org}
    and x."xid" < least(pg_snapshot_xmin(${now})::text::bigint, (select min(pg_snapshot_xmin(m."rolled_snapshot")::text::bigint) from "meters" m
                         where m."organization_id" = ${org} and m."rolled_snapshot" is not null and not (m."id" = any(${moved}))))`;

/**
 * Merges into every built rollup of the organization its events committed since the last merge
 * (visible in a fresh snapshot, not in the meter's `rolled_snapshot`) and stores that snapshot, in
 * one transaction under the organization's rollup lock. Returns the number of rollup rows written.
 */
export async function mergeRollups(em: EntityManager, organizationId: string): Promise<number> {
  return inOwnTransaction(em, async (tx) => {
    await runSql(tx, `select pg_advisory_xact_lock(${lockKey('$1::uuid')})`, [organizationId]);
    const { rows } = await runSql<{ id: string; rollup: MeterDefinition; before: string; now: string }>(
      tx,
      `select m."id", m."rollup", m."rolled_snapshot"::text as before, pg_current_snapshot()::text as now from "meters" m
       where m."organization_id" = $1 and m."rollup" is not null and m."rolled_snapshot" is not null`,
      [organizationId],
    );
    if (!rows.length) {
      await runSql(tx, trimXids('$1::uuid', 'pg_current_snapshot()', "'{}'::uuid[]"), [organizationId]);
      return 0;
    }
    const now = rows[0]!.now;
    const params = new SqlParams();
    const org = params.add(organizationId, 'uuid');
    const nowParam = params.add(now, 'pg_snapshot');
    const seenNow = `not ${unseenBy(now, params)}`;
    const selects = rows
      .filter((m) => m.before !== now)
      .map((m) => rollupSelect(m.id, organizationId, m.rollup, '"events"', `${unseenBy(m.before, params)} and ${seenNow}`, params));
    if (!selects.length) return 0;
    const ids = params.add(
      rows.map((m) => m.id),
      'uuid[]',
    );
    const { rows: merged } = await runSql<{ n: number }>(
      tx,
      writeRollupsSql(
        selects,
        `, moved as (update "meters" set "rolled_snapshot" = ${nowParam} where "id" = any(${ids})), trimmed as (${trimXids(org, nowParam, ids)})`,
      ),
      params.values,
    );
    return merged[0]?.n ?? 0;
  });
}

/**
 * Summarizes the page ranges of `events_xid_brin` that have none yet. An unsummarized range matches
 * every xid condition, so without this the unmerged-tail scan of every read would read every page
 * written since the last autovacuum (autosummarize queues at most a few hundred ranges): after a bulk
 * load, most of the table. Summaries, once made, are kept current by inserts. Off the request (after
 * a merge or rebuild), in its own short transaction; skipped when another summarization or a vacuum
 * holds the index (lock_timeout), which then does the same work; after a rebuild (`wait`) it waits
 * for them instead: no later merge may come to summarize what a bulk load left (autoanalyze of the
 * loaded table takes the same lock).
 */
export async function summarizeXidIndex(em: EntityManager, opts: { wait?: boolean } = {}): Promise<void> {
  if (em.isInTransaction()) return;
  // One statement (its own implicit transaction): the lock timeout is set for it alone, before the call.
  const timeout = opts.wait ? '' : "set_config('lock_timeout', '100ms', true), ";
  try {
    await runSql(em, `select ${timeout}brin_summarize_new_values('"events_xid_brin"'::regclass)`);
  } catch (err) {
    if ((err as { code?: string }).code !== '55P03') throw err;
  }
}

/** Merges waiting per organization: one runs at a time, later requests coalesce into one more. */
const merges = new Map<string, { running: boolean; again: boolean }>();
/** How long a scheduled merge waits, so that it takes the batches committed meanwhile along. */
const MERGE_DELAY_MS = 1000;

/**
 * Schedules `mergeRollups` for the organizations (after the caller's commit; a merge before it
 * commits simply leaves its events to the next one). Failures are reported to `onError` and leave
 * the events unmerged, where reads still count them and the next merge takes them.
 */
export function scheduleMerge(em: EntityManager, organizationIds: string[], onError: (err: unknown) => void = () => undefined): void {
  for (const org of new Set(organizationIds)) {
    const state = merges.get(org);
    if (state) {
      state.again = true;
      continue;
    }
    const entry = { running: false, again: false };
    merges.set(org, entry);
    const run = () => {
      entry.running = true;
      entry.again = false;
      mergeRollups(em.fork(), org)
        .then(() => summarizeXidIndex(em.fork()))
        .catch(onError)
        .finally(() => {
          entry.running = false;
          if (entry.again) setTimeout(run, MERGE_DELAY_MS).unref();
          else merges.delete(org);
        });
    };
    setTimeout(run, MERGE_DELAY_MS).unref();
  }
}

/**
 * Rebuilds a meter's rollups from its raw events for its current definition, holding its
 * organization's rollup lock (no merge runs meanwhile): every event visible in a fresh snapshot,
 * which becomes the meter's `rolled_snapshot`. Runs in the caller's transaction or its own.
 */
export async function rebuildRollup(em: EntityManager, meterId: string): Promise<void> {
  await inOwnTransaction(em, async (tx) => {
    const { rows: owner } = await runSql<{ organization_id: string }>(tx, 'select "organization_id" from "meters" where "id" = $1', [meterId]);
    if (!owner[0]) return;
    await runSql(tx, `select pg_advisory_xact_lock(${lockKey('$1::uuid')})`, [owner[0].organization_id]);
    const { rows } = await runSql<{ organization_id: string; filter: Filter; aggregation: Aggregation; now: string }>(
      tx,
      `select "organization_id", "filter", "aggregation", pg_current_snapshot()::text as now from "meters" where "id" = $1 for update`,
      [meterId],
    );
    const meter = rows[0];
    if (!meter) return;
    for (const table of ['meter_rollups', 'meter_rollup_totals', 'meter_rollup_days', 'meter_rollup_minutes']) {
      await runSql(tx, `delete from "${table}" where "meter_id" = $1`, [meterId]);
    }
    const params = new SqlParams();
    const below = `(e."xid" is null or not ${unseenBy(meter.now, params)})`;
    await runSql(tx, writeRollupsSql([rollupSelect(meterId, meter.organization_id, meter, '"events"', below, params)]), params.values);
    await runSql(
      tx,
      `update "meters" set "rollup" = jsonb_build_object('filter', "filter", 'aggregation', "aggregation"), "rolled_snapshot" = $2::pg_snapshot
       where "id" = $1`,
      [meterId, meter.now],
    );
  });
  await summarizeXidIndex(em, { wait: true });
}

/** Whether the meter's rollups follow its current filter and aggregation. */
export async function rollupIsCurrent(em: EntityManager, meterId: string): Promise<boolean> {
  return (await rollupState(em, meterId)).current;
}

/** A meter's definition and its rollups' state, read in one statement; null unless it belongs to one of `organizationIds`. */
export async function meterWithRollupState(
  em: EntityManager,
  meterId: string,
  organizationIds: string[],
): Promise<(MeterDefinition & { id: string; organizationId: string; current: boolean; rolledSnapshot: string | null }) | null> {
  const { rows } = await runSql<{ organization_id: string; filter: Filter; aggregation: Aggregation; current: boolean; rolled_snapshot: string | null }>(
    em,
    `select "organization_id", "filter", "aggregation",
            coalesce("rollup" = jsonb_build_object('filter', "filter", 'aggregation', "aggregation"), false)
              and "rolled_snapshot" is not null as current, "rolled_snapshot"::text as rolled_snapshot
     from "meters" where "id" = $1 and "organization_id" = any($2::uuid[])`,
    [meterId, organizationIds],
  );
  const m = rows[0];
  if (!m) return null;
  return { id: meterId, organizationId: m.organization_id, filter: m.filter, aggregation: m.aggregation, current: m.current, rolledSnapshot: m.rolled_snapshot };
}

/** Whether the meter's rollups follow its current definition, and the snapshot they hold (`rolled_snapshot`). */
export async function rollupState(em: EntityManager, meterId: string): Promise<{ current: boolean; rolledSnapshot: string | null }> {
  const { rows } = await runSql<{ current: boolean; rolled_snapshot: string | null }>(
    em,
    `select coalesce("rollup" = jsonb_build_object('filter', "filter", 'aggregation', "aggregation"), false)
              and "rolled_snapshot" is not null as current, "rolled_snapshot"::text as rolled_snapshot
     from "meters" where "id" = $1`,
    [meterId],
  );
  return { current: rows[0]?.current ?? false, rolledSnapshot: rows[0]?.rolled_snapshot ?? null };
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
export function combineSql(aggregation: Aggregation): string {
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

export type RollupGrain = 'day' | 'hour' | 'minute';
const GRAIN_MS: Record<RollupGrain, number> = { day: 86_400_000, hour: HOUR, minute: 60_000 };

/**
 * Which rollup rows answer [start, end] (end inclusive): whole UTC units of the coarsest grain, then
 * of each finer grain at the ends the coarser one leaves (`grains` coarsest first; days, hours and
 * minutes nest). `covered` is the union [from, to) of the spans: the unmerged tail is read over it,
 * the raw events over [start, covered.from) and [covered.to, end]. No span: everything from the raw
 * events.
 */
export function rollupSpans(start: Date, end: Date, grains: RollupGrain[]): { spans: { grain: RollupGrain; from: Date; to: Date }[]; covered: { from: Date; to: Date } | null } {
  const spans: { grain: RollupGrain; from: Date; to: Date }[] = [];
  let from: number | null = null;
  let to: number | null = null;
  for (const grain of grains) {
    const unit = GRAIN_MS[grain];
    const a = Math.ceil(start.getTime() / unit) * unit;
    const b = Math.floor(end.getTime() / unit) * unit;
    if (a >= b) continue;
    if (from === null || to === null) spans.push({ grain, from: new Date(a), to: new Date(b) });
    else {
      if (a < from) spans.push({ grain, from: new Date(a), to: new Date(from) });
      if (to < b) spans.push({ grain, from: new Date(to), to: new Date(b) });
    }
    from = a;
    to = b;
  }
  return { spans, covered: from === null || to === null ? null : { from: new Date(from), to: new Date(to) } };
}

/** The grains a read uses: per customer days (for intervals of a day or longer) and hours; all customers hours and minutes. */
export function readGrains(interval: string, allCustomers: boolean): RollupGrain[] {
  if (allCustomers) return ['hour', 'minute'];
  return interval === 'hour' ? ['hour'] : ['day', 'hour'];
}

/** The rollup table and time column of a grain, per customer or for all customers. */
export function grainTable(grain: RollupGrain, allCustomers: boolean): { table: string; column: string } {
  if (grain === 'day') return { table: 'meter_rollup_days', column: 'day' };
  if (grain === 'minute') return { table: 'meter_rollup_minutes', column: 'minute' };
  return { table: allCustomers ? 'meter_rollup_totals' : 'meter_rollups', column: 'hour' };
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
  /** No customer filter (`conditions` only select the organization): whole hours come from `meter_rollup_totals`. */
  allCustomers: boolean;
  params: SqlParams;
}

/**
 * Quantities per bucket (same rows as the raw query): whole hours of [start, end] from the rollups
 * and the events not merged yet, the partial hours at the ends from the raw events. `rolledSnapshot`
 * is the meter's `rolled_snapshot` the caller read; the statement checks it in its own snapshot and
 * answers null when a merge moved it meanwhile (read it again and retry).
 */
export async function rollupQuantities(
  em: EntityManager,
  q: RollupQuery & { rolledSnapshot: string },
): Promise<{ timestamp: Date; quantity: number }[] | null> {
  const params = new SqlParams();
  params.values.push(...q.params.values);
  const interval = params.add(q.interval, 'text');
  const start = params.add(q.start.toISOString(), 'timestamptz');
  const end = params.add(q.end.toISOString(), 'timestamptz');
  const meterId = params.add(q.meterId, 'uuid');
  const rolled = params.add(q.rolledSnapshot, 'pg_snapshot');
  const customer = q.conditions.join(' and ');
  const filter = compileFilter(q.definition.filter, params, 'e.');
  const value = valueSql(q.definition.aggregation, params);
  const raw = (range: string) =>
    `select date_trunc(${interval}, e."timestamp" at time zone 'UTC') as ts, 1::bigint as n, (x.v is not null)::int::bigint as vn,
       coalesce(x.v, 0) as vsum, x.v as vmin, x.v as vmax
     from "events" e cross join lateral (select ${value} as v) x
     where ${range} and ${customer} and ${filter}`;
  const parts: string[] = [];
  const { spans, covered } = rollupSpans(q.start, q.end, readGrains(q.interval, q.allCustomers));
  if (covered) {
    const org = q.allCustomers ? '' : params.add(q.organizationId, 'uuid');
    for (const span of spans) {
      const { table, column } = grainTable(span.grain, q.allCustomers);
      const rows = `select r.*${q.allCustomers ? '' : `, ${org} as "organization_id"`} from "${table}" r
        where r."meter_id" = ${meterId} and r."${column}" >= ${params.add(span.from.toISOString(), 'timestamptz')}
          and r."${column}" < ${params.add(span.to.toISOString(), 'timestamptz')}`;
      parts.push(
        `select date_trunc(${interval}, e."${column}" at time zone 'UTC') as ts, e."n", e."vn", e."vsum", e."vmin", e."vmax"
         from (${rows}) e${q.allCustomers ? '' : ` where ${customer}`}`,
      );
    }
    const hs = params.add(covered.from.toISOString(), 'timestamptz');
    const he = params.add(covered.to.toISOString(), 'timestamptz');
    parts.push(raw(`${unseenBy(q.rolledSnapshot, params)} and e."timestamp" >= ${hs} and e."timestamp" < ${he}`));
    if (q.start < covered.from) parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" < ${hs}`));
    parts.push(raw(`e."timestamp" >= ${he} and e."timestamp" <= ${end}`));
  } else {
    parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" <= ${end}`));
  }
  const totals = `select p.ts, ${combineSql(q.definition.aggregation)} as quantity from (${parts.join(' union all ')}) p group by 1`;
  const { rows } = await runSql<{ timestamp: Date; quantity: number; same: boolean }>(
    em,
    `select q.*, (select m."rolled_snapshot"::text = ${rolled}::text from "meters" m where m."id" = ${meterId}) as same
     from (${bucketedQuantitiesSql(interval, start, end, totals)}) q order by q."timestamp"`,
    params.values,
  );
  if (rows.length && !rows[0]!.same) return null;
  return rows;
}
