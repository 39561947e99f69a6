/** Meters: a filter over ingested events and an aggregation turning them into a quantity. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export type FilterOperator = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'not_like';
export interface FilterClause {
  property: string;
  operator: FilterOperator;
  value: string | number | boolean;
}
export interface Filter {
  conjunction: 'and' | 'or';
  clauses: (FilterClause | Filter)[];
}
export type Aggregation =
  | { func: 'count' }
  | { func: 'sum' | 'max' | 'min' | 'avg'; property: string };

export const Meter = defineEntity({
  name: 'Meter',
  tableName: 'meters',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    filter: p.json<Filter>(),
    aggregation: p.json<Aggregation>(),
    metadata: p.json<Metadata>(),
    /**
     * The definition (filter and aggregation) its `meter_rollups` rows were built from; null until
     * they are built. Written only by `rollups.ts` (raw SQL, under the organization's rollup lock);
     * rollups whose definition differs from the meter's are rebuilt before use.
     */
    rollup: p.json<MeterDefinition>().nullable().lazy(),
    /** The snapshot whose committed events the rollups hold (`rollups.ts`: merged after commit); null until built. */
    rolledSnapshot: p.string().columnType('pg_snapshot').nullable().lazy(),
  },
});
export type Meter = InferEntity<typeof Meter>;

export interface MeterDefinition {
  filter: Filter;
  aggregation: Aggregation;
}

/**
 * Hourly pre-aggregates of one meter's matching events, per (UTC hour, customer_id,
 * external_customer_id) as the events carry them: the number of events `n`, and over the numeric
 * values of the aggregation property their number `vn`, sum, min and max. Any aggregation of any
 * set of whole hours follows exactly (count = Σn, sum = Σvsum, min/max of mins/maxes,
 * avg = Σvsum / Σvn). Kept by the ingest statement itself (`rollups.ts`); rows are merged per key
 * with ON CONFLICT, so the table grows with meters × hours × customers, not with events.
 * `customer_id` is a plain copy (no foreign key): customers are only ever soft-deleted.
 */
export const MeterRollup = defineEntity({
  name: 'MeterRollup',
  tableName: 'meter_rollups',
  properties: {
    id: p.bigint().primary().autoincrement(),
    meter: () => p.manyToOne(Meter).deleteRule('cascade').index(false),
    hour: p.datetime(),
    customerId: p.uuid().nullable(),
    externalCustomerId: p.string().nullable(),
    n: p.bigint(),
    vn: p.bigint(),
    vsum: p.decimal().columnType('numeric'),
    vmin: p.decimal().columnType('numeric').nullable(),
    vmax: p.decimal().columnType('numeric').nullable(),
  },
  indexes: [
    {
      name: 'meter_rollups_key_unique',
      expression:
        'create unique index "meter_rollups_key_unique" on "meter_rollups" ("meter_id", "hour", "customer_id", "external_customer_id") nulls not distinct',
    },
    { name: 'meter_rollups_meter_customer_hour_index', properties: ['meter', 'customerId', 'hour'] },
    { name: 'meter_rollups_meter_external_customer_hour_index', properties: ['meter', 'externalCustomerId', 'hour'] },
  ],
});
export type MeterRollup = InferEntity<typeof MeterRollup>;

/**
 * The same hourly pre-aggregates as `MeterRollup` without the customer dimension: one row per meter
 * and UTC hour, the sum of that hour's `MeterRollup` rows (count, sum, min and max compose; avg is
 * Σvsum / Σvn). Quantities without a customer filter read these, so their cost follows hours, not
 * customers × hours. Written with the `MeterRollup` rows by the same merge and rebuild (`rollups.ts`).
 */
export const MeterRollupTotal = defineEntity({
  name: 'MeterRollupTotal',
  tableName: 'meter_rollup_totals',
  properties: {
    id: p.bigint().primary().autoincrement(),
    meter: () => p.manyToOne(Meter).deleteRule('cascade').index(false),
    hour: p.datetime(),
    n: p.bigint(),
    vn: p.bigint(),
    vsum: p.decimal().columnType('numeric'),
    vmin: p.decimal().columnType('numeric').nullable(),
    vmax: p.decimal().columnType('numeric').nullable(),
  },
  uniques: [{ name: 'meter_rollup_totals_meter_hour_unique', properties: ['meter', 'hour'] }],
});
export type MeterRollupTotal = InferEntity<typeof MeterRollupTotal>;

/**
 * The same pre-aggregates as `MeterRollup` per UTC day: one customer's whole days read one row each
 * (`rollups.ts`), the hours only at the range's partial days. Written with the hourly rows by the
 * same merge and rebuild.
 */
export const MeterRollupDay = defineEntity({
  name: 'MeterRollupDay',
  tableName: 'meter_rollup_days',
  properties: {
    id: p.bigint().primary().autoincrement(),
    meter: () => p.manyToOne(Meter).deleteRule('cascade').index(false),
    day: p.datetime(),
    customerId: p.uuid().nullable(),
    externalCustomerId: p.string().nullable(),
    n: p.bigint(),
    vn: p.bigint(),
    vsum: p.decimal().columnType('numeric'),
    vmin: p.decimal().columnType('numeric').nullable(),
    vmax: p.decimal().columnType('numeric').nullable(),
  },
  indexes: [
    {
      name: 'meter_rollup_days_key_unique',
      expression:
        'create unique index "meter_rollup_days_key_unique" on "meter_rollup_days" ("meter_id", "day", "customer_id", "external_customer_id") nulls not distinct',
    },
    { name: 'meter_rollup_days_meter_customer_day_index', properties: ['meter', 'customerId', 'day'] },
    { name: 'meter_rollup_days_meter_external_customer_day_index', properties: ['meter', 'externalCustomerId', 'day'] },
  ],
});
export type MeterRollupDay = InferEntity<typeof MeterRollupDay>;

/**
 * Per meter and UTC minute, all customers: the partial hours at the ends of an all-customers range
 * read these, so only the partial minutes come from the raw events. Same merge and rebuild.
 */
export const MeterRollupMinute = defineEntity({
  name: 'MeterRollupMinute',
  tableName: 'meter_rollup_minutes',
  properties: {
    id: p.bigint().primary().autoincrement(),
    meter: () => p.manyToOne(Meter).deleteRule('cascade').index(false),
    minute: p.datetime(),
    n: p.bigint(),
    vn: p.bigint(),
    vsum: p.decimal().columnType('numeric'),
    vmin: p.decimal().columnType('numeric').nullable(),
    vmax: p.decimal().columnType('numeric').nullable(),
  },
  uniques: [{ name: 'meter_rollup_minutes_meter_minute_unique', properties: ['meter', 'minute'] }],
});
export type MeterRollupMinute = InferEntity<typeof MeterRollupMinute>;
