/**
 * GET /v1/meters/{id}/quantities in one prepared statement whose answer is the response's JSON text.
 *
 * Whole UTC days (one customer), hours and minutes (all customers) come from the rollups
 * (`rollupSpans` in `rollups.ts`), only the partial hour or minute at either end from the raw events.
 * The statement text depends only on the meter's definition (its compiled filter and aggregation),
 * on whether customers are filtered and on which rollup spans the range has; every value is a
 * parameter. So it is prepared once per connection (`kit/read-sql.ts`), not planned per request.
 * What it needs of the meter comes from a per-process cache of meter definitions, and the statement
 * checks, in its own snapshot, that the meter is one of the caller's organizations', that its filter
 * and aggregation are still the cached ones and that its rollups follow them; when not (first read,
 * meter changed, rollups to rebuild, another organization's meter) it answers nothing and the caller
 * takes the general path (`meterQuantities`), which refreshes the cache.
 *
 * The unmerged tail is read against the meter's `rolled_snapshot` as the statement sees it (the
 * rollups and the snapshot move together in a merge's transaction, and one statement reads both in
 * one snapshot), so no retry is needed: events whose transaction id is at or above the snapshot's
 * xmin and not visible in it (`xid >= xmin` is a BRIN range; between xmin and xmax, usually none, the
 * visibility test filters). That scan reads every range summary of `events_xid_brin`, which grow with
 * the table, so it runs only when `events_xids` (one row per transaction and organization whose
 * events it inserted, kept by a statement trigger on `events`) holds a transaction of the meter's
 * organization that the snapshot does not (`pending`): after the merge has caught up, a read
 * touches no raw event outside its partial edges, whatever other organizations ingested meanwhile.
 * Customers are resolved inside the statement too (the same rules as `eventConditions`: ids of the
 * organization's customers, deleted ones included, and their external ids; external ids and the
 * live customers carrying them).
 */
import type { EntityManager } from '../../kit/db.ts';
import { isoSql, RawJson } from '../../kit/read-sql.ts';
import { SqlParams } from '../events/sql.ts';
import { preparedRows } from './prepared.ts';
import type { Aggregation, Filter } from './entities.ts';
import { compileFilter } from './filter.ts';
import { bucketedQuantitiesSql, combineSql, grainTable, readGrains, rollupSpans, valueSql } from './rollups.ts';
import type { QuantitiesQuery } from './service.ts';

interface CachedMeter {
  organizationId: string;
  filter: Filter;
  aggregation: Aggregation;
  /**
   * The xmin of a `rolled_snapshot` the meter had (snapshots only move forward, so it is at most the
   * current one's): a literal lower bound on the tail's xids that lets the planner estimate the
   * tail from the index's statistics (a few rows, one BRIN scan) instead of a third of the table.
   */
  xminHint: string;
}

/** Meter id → the definition last read; checked by every statement, so a stale entry costs one fallback. */
const definitions = new Map<string, CachedMeter>();
const MAX_CACHED = 1000;

/** Remembers what the general path read of a meter (its rollups current), for the next reads. */
export function rememberMeter(id: string, meter: Omit<CachedMeter, 'xminHint'> & { rolledSnapshot: string | null }): void {
  if (!meter.rolledSnapshot) return;
  if (definitions.size >= MAX_CACHED && !definitions.has(id)) definitions.delete(definitions.keys().next().value!);
  const xminHint = meter.rolledSnapshot.split(':')[0]!;
  definitions.set(id, { organizationId: meter.organizationId, filter: meter.filter, aggregation: meter.aggregation, xminHint });
}

/**
 * The response body `{"quantities": [...]}` for a meter whose definition is cached and whose rollups
 * follow it, or null (not cached, changed, not current, not visible to `organizationIds`): the caller
 * then takes the general path. `q` has passed `checkRange`.
 */
export async function cachedQuantitiesJson(
  em: EntityManager,
  meterId: string,
  organizationIds: string[],
  q: QuantitiesQuery,
): Promise<RawJson | null> {
  const meter = definitions.get(meterId);
  if (!meter || !organizationIds.includes(meter.organizationId)) return null;
  const params = new SqlParams();
  const id = params.add(meterId, 'uuid');
  const org = params.add(meter.organizationId, 'uuid');
  const def = `m."filter" = ${params.add(JSON.stringify(meter.filter), 'jsonb')} and m."aggregation" = ${params.add(JSON.stringify(meter.aggregation), 'jsonb')}`;
  const interval = params.add(q.interval, 'text');
  const start = params.add(q.start.toISOString(), 'timestamptz');
  const end = params.add(q.end.toISOString(), 'timestamptz');

  // Customers (alias-relative: `e.` is an event row or a rollup row, both have the two columns),
  // resolved once per statement in the CTE `cu` (every part of the union reads them).
  const customerArms: string[] = [];
  const resolved: string[] = [];
  if (q.customerIds) {
    const ids = params.add(q.customerIds, 'uuid[]');
    resolved.push(
      `array(select c."id" from "customers" c where c."id" = any(${ids}) and c."organization_id" = ${org}) as ids`,
      `array(select c."external_id" from "customers" c
         where c."id" = any(${ids}) and c."organization_id" = ${org} and c."external_id" is not null) as ids_ext`,
    );
    customerArms.push(`(e."customer_id" = any((select ids from cu)::uuid[]) or e."external_customer_id" = any((select ids_ext from cu)::text[]))`);
  }
  if (q.externalCustomerIds) {
    const ext = params.add(q.externalCustomerIds, 'text[]');
    resolved.push(
      `array(select c."id" from "customers" c
         where c."external_id" = any(${ext}) and c."organization_id" = ${org} and c."deleted_at" is null) as ext_ids`,
    );
    customerArms.push(`(e."external_customer_id" = any(${ext}) or e."customer_id" = any((select ext_ids from cu)::uuid[]))`);
  }
  const customer = customerArms.length ? customerArms.join(' and ') : 'true';
  const filter = compileFilter(meter.filter, params, 'e.');
  const value = valueSql(meter.aggregation, params);
  const raw = (range: string) =>
    `select date_trunc(${interval}, e."timestamp" at time zone 'UTC') as ts, 1::bigint as n, (x.v is not null)::int::bigint as vn,
       coalesce(x.v, 0) as vsum, x.v as vmin, x.v as vmax
     from "events" e cross join lateral (select ${value} as v) x
     where (select ok from m) and e."organization_id" = ${org} and ${range} and ${customer} and ${filter}`;
  const parts: string[] = [];
  let tailRange: string | undefined;
  const allCustomers = !customerArms.length;
  const { spans, covered } = rollupSpans(q.start, q.end, readGrains(q.interval, allCustomers));
  if (covered) {
    for (const span of spans) {
      const { table, column } = grainTable(span.grain, allCustomers);
      parts.push(
        `select date_trunc(${interval}, e."${column}" at time zone 'UTC') as ts, e."n", e."vn", e."vsum", e."vmin", e."vmax"
         from "${table}" e
         where (select ok from m) and e."meter_id" = ${id} and e."${column}" >= ${params.add(span.from.toISOString(), 'timestamptz')}
           and e."${column}" < ${params.add(span.to.toISOString(), 'timestamptz')} and ${customer}`,
      );
    }
    const he = params.add(covered.to.toISOString(), 'timestamptz');
    if (q.start < covered.from) parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" < ${params.add(covered.from.toISOString(), 'timestamptz')}`));
    parts.push(raw(`e."timestamp" >= ${he} and e."timestamp" <= ${end}`));
    tailRange = `e."xid" >= (select xmin from m) and not pg_visible_in_snapshot(e."xid"::text::xid8, (select snap from m))
           and e."timestamp" < ${he}`;
  } else {
    parts.push(raw(`e."timestamp" >= ${start} and e."timestamp" <= ${end}`));
  }
  // The tail's own parameters come last, so the statement without the tail takes the others.
  const common = params.values.slice();
  const tail = tailRange && covered
    && raw(`(select pending from m) and e."xid" >= ${params.add(meter.xminHint, 'bigint')}
             and e."timestamp" >= ${params.add(covered.from.toISOString(), 'timestamptz')} and ${tailRange}`);
  const statement = (withTail: boolean): string => {
    const all = withTail && tail ? [...parts, tail] : parts;
    const totals = `select p.ts, ${combineSql(meter.aggregation)} as quantity from (${all.join(' union all ')}) p group by 1`;
    // Without the tail the statement answers only when nothing is pending (the tail would be empty).
    const answers = withTail || !tail ? '(select ok from m)' : '(select ok and not pending from m)';
    return `with m as materialized (
      select coalesce(${def} and m."rollup" = jsonb_build_object('filter', m."filter", 'aggregation', m."aggregation")
                      and m."rolled_snapshot" is not null, false) as ok,
             m."rolled_snapshot" as snap, pg_snapshot_xmin(m."rolled_snapshot")::text::bigint as xmin,
             exists (select 1 from "events_xids" x where x."organization_id" = m."organization_id"
                       and x."xid" >= pg_snapshot_xmin(m."rolled_snapshot")::text::bigint
                       and not pg_visible_in_snapshot(x."xid"::text::xid8, m."rolled_snapshot")) as pending
      from "meters" m where m."id" = ${id} and m."organization_id" = ${org}
    )${resolved.length ? `, cu as materialized (select ${resolved.join(', ')})` : ''}, q as (${bucketedQuantitiesSql(interval, start, end, totals)})
    select coalesce((select ok from m), false) as ok, coalesce((select pending from m), false) as pending, (select xmin from m)::text as xmin,
      (select json_build_object('quantities', json_agg(json_build_object('timestamp', ${isoSql('q."timestamp"')}, 'quantity', q.quantity)
        order by q."timestamp"))::text from q where ${answers}) as body`;
  };
  type Row = { ok: boolean; pending: boolean; xmin: string | null; body: string | null };
  // The common case (merges caught up) runs without the unmerged tail, under a generic plan: its
  // parameters only bound ranges of indexed columns, so one plan per connection serves every read
  // and PostgreSQL does not plan it again per request. When something is pending it answers no body
  // and the full statement (custom plans, whose literal xid hint keeps the tail's BRIN estimate
  // small) answers instead, in a snapshot of its own: each answer comes from one statement.
  let row = (await preparedRows<Row>(em, statement(false), common, { generic: true }))[0];
  if (tail && row?.ok && row.pending) row = (await preparedRows<Row>(em, statement(true), params.values))[0];
  if (!row?.ok || row.body === null) {
    definitions.delete(meterId);
    return null;
  }
  if (row.xmin) meter.xminHint = row.xmin;
  return new RawJson(row.body);
}
