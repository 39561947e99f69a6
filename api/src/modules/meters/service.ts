/**
 * Meter rules and queries. Quantities and matching events are computed in SQL, never by looping over
 * rows; quantities come from the hourly rollups of `rollups.ts`.
 */
import type { EntityManager } from '../../kit/db.ts';
import { fieldError } from '../../kit/errors.ts';
import { Organization } from '../organizations/entities.ts';
import { eventConditions } from '../events/service.ts';
import { metadataQuerySql, runSql, SqlParams } from '../events/sql.ts';
import { exceedsIntervalLimit, INTERVAL_MAX_DAYS } from '../metrics/limits.ts';
import { Meter, type Aggregation, type Filter } from './entities.ts';
import { compileAggregation, compileFilter } from './filter.ts';
import { bucketedQuantitiesSql, rebuildRollup, rollupQuantities, rollupState } from './rollups.ts';
import type { TimeInterval } from './schemas.ts';

export function createMeter(
  em: EntityManager,
  organizationId: string,
  input: { name: string; filter: Filter; aggregation: Aggregation; metadata?: Record<string, string | number | boolean> },
): Meter {
  return em.create(Meter, {
    organization: em.getReference(Organization, organizationId),
    name: input.name,
    filter: input.filter,
    aggregation: input.aggregation,
    metadata: input.metadata ?? {},
  });
}

export function updateMeter(
  meter: Meter,
  input: {
    name?: string | null;
    filter?: Filter | null;
    aggregation?: Aggregation | null;
    metadata?: Record<string, string | number | boolean> | null;
  },
): void {
  if (input.name != null) meter.name = input.name;
  if (input.filter != null) meter.filter = input.filter;
  if (input.aggregation != null) meter.aggregation = input.aggregation;
  if (input.metadata != null) meter.metadata = input.metadata;
}

/** A new meter saved, with its rollups built from the events already ingested. */
export async function saveNewMeter(em: EntityManager, organizationId: string, input: Parameters<typeof createMeter>[2]): Promise<Meter> {
  const meter = createMeter(em, organizationId, input);
  await em.flush();
  await rebuildRollup(em.fork(), meter.id);
  return meter;
}

/** A meter's change saved; a changed filter or aggregation invalidates its rollups, rebuilt from the raw events. */
export async function saveMeterChange(em: EntityManager, meter: Meter, input: Parameters<typeof updateMeter>[1]): Promise<Meter> {
  const before = JSON.stringify([meter.filter, meter.aggregation]);
  updateMeter(meter, input);
  await em.flush();
  if (JSON.stringify([meter.filter, meter.aggregation]) !== before) await rebuildRollup(em.fork(), meter.id);
  return meter;
}

const SORT_COLUMNS: Record<string, string> = { created_at: 'm."created_at"', name: 'm."name"' };

/** Ids of one page of meters (in order) and the total, for the list route. */
export async function listMeterIds(
  em: EntityManager,
  q: { organizationIds: string[]; query?: string; metadata: Record<string, string[]>; sorting: string[] },
  page: { limit: number; offset: number },
): Promise<{ ids: string[]; total: number }> {
  const params = new SqlParams();
  const where = [`m."organization_id" = any(${params.add(q.organizationIds, 'uuid[]')})`];
  if (q.query) where.push(`strpos(lower(m."name"), lower(${params.add(q.query, 'text')})) > 0`);
  where.push(...metadataQuerySql('m."metadata"', q.metadata, params));
  const order = q.sorting.map((s) => `${SORT_COLUMNS[s.replace(/^-/, '')]} ${s.startsWith('-') ? 'desc' : 'asc'}`);
  const condition = where.join(' and ');
  const { rows: count } = await runSql<{ n: string }>(em, `select count(*) as n from "meters" m where ${condition}`, params.values);
  const total = Number(count[0]?.n ?? 0);
  if (!total) return { ids: [], total };
  const { rows } = await runSql<{ id: string }>(
    em,
    `select m."id" from "meters" m where ${condition}
     order by ${[...order, 'm."id" asc'].join(', ')}
     limit ${params.add(page.limit, 'int')} offset ${params.add(page.offset, 'int')}`,
    params.values,
  );
  return { ids: rows.map((r) => r.id), total };
}

export interface QuantitiesQuery {
  start: Date;
  end: Date;
  interval: TimeInterval;
  customerIds?: string[];
  externalCustomerIds?: string[];
}

export function checkRange(q: QuantitiesQuery): void {
  if (q.end < q.start) throw fieldError(['query', 'end_timestamp'], 'end_timestamp must not be before start_timestamp');
  if (exceedsIntervalLimit(q.interval, q.start, q.end)) {
    throw fieldError(
      ['query', 'end_timestamp'],
      `The range may span at most ${INTERVAL_MAX_DAYS[q.interval]} days with the ${q.interval} interval`,
    );
  }
}

/**
 * One bucket per interval step from the step containing `start` to the one containing `end`
 * (UTC calendar steps; weeks start on Monday), each with the meter's aggregation over the matching
 * events in [start, end] of that step; empty steps are 0. Read from the meter's hourly rollups
 * (built first when they do not follow its current definition) plus the raw events of the partial
 * hours at the ends; equal to `rawMeterQuantities`.
 */
export async function meterQuantities(
  em: EntityManager,
  meter: MeterRef,
  q: QuantitiesQuery,
  /** The rollups' state when the caller read it with the meter (`meterWithRollupState`), else read here. */
  known?: { current: boolean; rolledSnapshot: string | null },
): Promise<{ timestamp: string; quantity: number }[]> {
  checkRange(q);
  const params = new SqlParams();
  const conditions = await eventConditions(
    em,
    { organizationIds: [meter.organization.id], customerIds: q.customerIds, externalCustomerIds: q.externalCustomerIds },
    params,
  );
  for (let attempt = 0; ; attempt++) {
    let state = attempt === 0 && known ? known : await rollupState(em, meter.id);
    if (!state.current) {
      await rebuildRollup(em.fork(), meter.id);
      state = await rollupState(em, meter.id);
    }
    // A merge committing between the horizon's read and the query makes the query answer null: read it again.
    const rows = state.rolledSnapshot
      ? await rollupQuantities(em, {
          meterId: meter.id,
          organizationId: meter.organization.id,
          definition: { filter: meter.filter, aggregation: meter.aggregation },
          start: q.start,
          end: q.end,
          interval: q.interval,
          conditions,
          allCustomers: !q.customerIds && !q.externalCustomerIds,
          params,
          rolledSnapshot: state.rolledSnapshot,
        })
      : null;
    if (rows) return rows.map((r) => ({ timestamp: new Date(r.timestamp).toISOString(), quantity: Number(r.quantity) }));
    if (attempt >= 20) return rawMeterQuantities(em, meter, q);
  }
}

/** What the quantity reads use of a meter (a `Meter` entity is one). */
export interface MeterRef {
  id: string;
  organization: { id: string };
  filter: Filter;
  aggregation: Aggregation;
}

/** The same quantities computed from the raw events alone (the reference the rollups must equal). */
export async function rawMeterQuantities(
  em: EntityManager,
  meter: MeterRef,
  q: QuantitiesQuery,
): Promise<{ timestamp: string; quantity: number }[]> {
  checkRange(q);
  const params = new SqlParams();
  const interval = params.add(q.interval, 'text');
  const start = params.add(q.start.toISOString(), 'timestamptz');
  const end = params.add(q.end.toISOString(), 'timestamptz');
  const where = await eventConditions(
    em,
    {
      organizationIds: [meter.organization.id],
      customerIds: q.customerIds,
      externalCustomerIds: q.externalCustomerIds,
      condition: compileFilter(meter.filter, params, 'e.'),
    },
    params,
  );
  const aggregate = compileAggregation(meter.aggregation, params, 'e.');
  const totals = `select date_trunc(${interval}, e."timestamp" at time zone 'UTC') as ts, ${aggregate} as quantity
     from "events" e
     where e."timestamp" >= ${start} and e."timestamp" <= ${end} and ${where.join(' and ')}
     group by 1`;
  const { rows } = await runSql<{ timestamp: Date; quantity: number }>(em, bucketedQuantitiesSql(interval, start, end, totals), params.values);
  return rows.map((r) => ({ timestamp: new Date(r.timestamp).toISOString(), quantity: Number(r.quantity) }));
}

/** The SQL condition (on `events e`) selecting a meter's events, with its values bound in `params`. */
export function meterCondition(meter: Meter, params: SqlParams): string {
  return compileFilter(meter.filter, params, 'e.');
}
