/**
 * GET /v1/metrics: the twelve figures per period, computed by PostgreSQL in one statement.
 *
 * Periods: `generate_series` from start_date 00:00 to end_date 23:59:59.999999 (local time in the
 * requested time zone, UTC by default) in steps of one interval; each period's timestamp is its
 * point in that series and it covers the whole calendar unit (hour, day, ISO week, month, year) the
 * point falls in, as the public API does. Orders count once paid (status other than `pending`);
 * revenue is the net amount (after discount, before tax), refunds not deducted.
 *
 * - orders, revenue: paid orders created in the period; cumulative_revenue: running sum over the periods.
 * - average_order_value: ceil(avg net), 0 without orders.
 * - one_time_products(_revenue): those orders without a subscription.
 * - new_subscriptions: subscriptions started in the period; new_subscriptions_revenue: the period's
 *   orders of subscriptions started in it.
 * - renewed_subscriptions(_revenue): subscriptions (distinct) with an order in the period that
 *   started before it, and the net of those orders.
 * - active_subscriptions: started before the period ends and not ended before it starts;
 *   monthly_recurring_revenue: their amounts, yearly ones as round(amount / 12) each.
 *
 * Filters narrow both orders and subscriptions: organizations (within those the caller sees),
 * products, billing type (the product's: recurring or one_time) and customers.
 */
import type { EntityManager } from '../../kit/db.ts';
import { isoSql } from '../../kit/read-sql.ts';
import { SqlParams, runSql } from '../events/sql.ts';
import { preparedRows } from '../meters/prepared.ts';
import { bucketsSql } from './buckets-sql.ts';
import { ACTIVE_AND_FIGURES, periodsSql, type MetricsQuery } from './periods-sql.ts';

export { bucketsStatement } from './buckets-sql.ts';
export type { MetricsQuery } from './periods-sql.ts';

export const METRIC_DEFINITIONS = {
  orders: { display_name: 'Orders', type: 'scalar' },
  revenue: { display_name: 'Revenue', type: 'currency' },
  cumulative_revenue: { display_name: 'Cumulative Revenue', type: 'currency' },
  average_order_value: { display_name: 'Average Order Value', type: 'currency' },
  one_time_products: { display_name: 'One-Time Products', type: 'scalar' },
  one_time_products_revenue: { display_name: 'One-Time Products Revenue', type: 'currency' },
  new_subscriptions: { display_name: 'New Subscriptions', type: 'scalar' },
  new_subscriptions_revenue: { display_name: 'New Subscriptions Revenue', type: 'currency' },
  renewed_subscriptions: { display_name: 'Renewed Subscriptions', type: 'scalar' },
  renewed_subscriptions_revenue: { display_name: 'Renewed Subscriptions Revenue', type: 'currency' },
  active_subscriptions: { display_name: 'Active Subscriptions', type: 'scalar' },
  monthly_recurring_revenue: { display_name: 'Monthly Recurring Revenue', type: 'currency' },
} as const satisfies Record<string, { display_name: string; type: 'scalar' | 'currency' }>;

export type MetricSlug = keyof typeof METRIC_DEFINITIONS;
export const METRIC_SLUGS = Object.keys(METRIC_DEFINITIONS) as MetricSlug[];

export type MetricsPeriod = { timestamp: Date } & Record<MetricSlug, number>;

/** Filters shared by the orders and the subscriptions of the statement (`alias` is the scanned table). */
function filterSql(alias: string, q: MetricsQuery, params: SqlParams): string {
  const where = [`${alias}.organization_id = any(${params.add(q.organizationIds, 'uuid[]')})`];
  if (q.productIds?.length) where.push(`${alias}.product_id = any(${params.add(q.productIds, 'uuid[]')})`);
  if (q.customerIds?.length) where.push(`${alias}.customer_id = any(${params.add(q.customerIds, 'uuid[]')})`);
  const billing = new Set(q.billingTypes ?? []);
  if (billing.size === 1) {
    where.push(
      `exists (select 1 from products pr where pr.id = ${alias}.product_id and pr.recurring_interval is ${billing.has('recurring') ? 'not null' : 'null'})`,
    );
  }
  return where.join(' and ');
}

/**
 * The figures, from the 15-minute aggregates the order and subscription triggers keep (see
 * docs/performance.md) when the query allows it: at most one customer (the per-customer
 * aggregates), at most one product, no billing-type filter, and every period edge on a quarter
 * hour; otherwise from the rows.
 */
export async function computeMetrics(em: EntityManager, q: MetricsQuery): Promise<MetricsPeriod[]> {
  if (bucketsAnswer(q)) {
    const fromBuckets = await computeMetricsFromBuckets(em, q);
    if (fromBuckets) return fromBuckets;
  }
  return computeMetricsFromRows(em, q);
}

/** Whether the aggregates can answer the query's filters: at most one customer and one product, no billing type. */
export function bucketsAnswer(q: MetricsQuery): boolean {
  return (q.customerIds?.length ?? 0) <= 1 && (q.productIds?.length ?? 0) <= 1 && new Set(q.billingTypes ?? []).size !== 1;
}

/**
 * One statement over metrics_order_buckets and metrics_subscription_buckets (quarter-hour bucket
 * numbers b; a period is the buckets [ps, pe)). An order bucket row counts in the period its
 * bucket falls in, as an order would; its subscription started in the period when
 * b - pe < start_gap <= b - ps and before it when start_gap > b - ps; it is the first of its
 * subscription in the period (renewed_subscriptions, distinct) when renew_gap > b - ps.
 * Subscriptions recorded as ending before they started are read from their rows. One customer
 * reads the per-customer tables, whose renewal gaps are within that customer's orders. Null when
 * a period edge is not on a quarter hour (a historical local-mean-time offset) or for several
 * customers (a subscription with orders of two of them would count once per customer).
 */
export async function computeMetricsFromBuckets(em: EntityManager, q: MetricsQuery): Promise<MetricsPeriod[] | null> {
  if ((q.customerIds?.length ?? 0) > 1) return null;
  const params = new SqlParams();
  const rows = await preparedRows<Record<string, unknown>>(em, bucketsSql(q, params), params.values);
  if (rows.some((row) => row.aligned !== true)) return null;
  return rows.map(toPeriod);
}

/**
 * The periods of `computeMetricsFromBuckets` as the JSON text of the response's `periods` array,
 * built by PostgreSQL in the same statement, or null where that answers null (the caller reads the
 * rows). Same numbers: every figure is an integer. Run on a generic plan (`preparedRows`' `generic`):
 * its parameters only bound ranges and ids, and a custom plan was mostly planning time (PostgreSQL
 * CPU per one-customer read at 10 M orders 8.0–8.5 → 4.5–5.6 ms, docs/performance.md).
 */
export async function metricsPeriodsJsonFromBuckets(em: EntityManager, q: MetricsQuery): Promise<string | null> {
  if ((q.customerIds?.length ?? 0) > 1) return null;
  const { text, values } = periodsJsonStatement(q);
  const rows = await preparedRows<{ aligned: boolean; body: string | null }>(em, text, values, { generic: true });
  return rows[0]?.aligned && rows[0].body !== null ? rows[0].body : null;
}

/**
 * The statement's text for one shape: `bucketsSql`'s text varies with the interval and with which of
 * product and customer are given, never with values. It is built once per shape over stand-ins for
 * the values (`slots`); each request only puts its own values where the stand-ins were bound. Reusing
 * the same string also makes `preparedRows`' lookup of the statement's name a hash already computed.
 */
const jsonStatements = new Map<string, { text: string; slots: ((q: MetricsQuery) => unknown)[] }>();

function periodsJsonStatement(q: MetricsQuery): { text: string; values: unknown[] } {
  const product = Boolean(q.productIds?.length);
  const customer = Boolean(q.customerIds?.length);
  const key = `${q.interval}|${product}|${customer}`;
  let statement = jsonStatements.get(key);
  if (!statement) {
    const stand = new Map<unknown, (q: MetricsQuery) => unknown>();
    const standIn = (read: (q: MetricsQuery) => unknown) => {
      const marker = { standIn: stand.size };
      stand.set(marker, read);
      return marker as never;
    };
    const template: MetricsQuery = {
      interval: q.interval,
      startDate: standIn((x) => x.startDate),
      endDate: standIn((x) => x.endDate),
      timezone: standIn((x) => x.timezone),
      organizationIds: standIn((x) => x.organizationIds),
      productIds: product ? [standIn((x) => x.productIds![0])] : undefined,
      customerIds: customer ? [standIn((x) => x.customerIds![0])] : undefined,
    };
    const params = new SqlParams();
    const figures = METRIC_SLUGS.map((slug) => `'${slug}', x.${slug}::bigint`).join(', ');
    const text = `select coalesce(bool_and(x.aligned), false) as aligned,
      json_agg(json_build_object('timestamp', ${isoSql('x.ts')}, ${figures}) order by x.ts)::text as body
    from (${bucketsSql(template, params)}) x`;
    const slots = params.values.map((v) => {
      const read = stand.get(v);
      if (!read) throw new Error('metrics statement: a bound value is not one of the query\'s values');
      return read;
    });
    statement = { text, slots };
    jsonStatements.set(key, statement);
  }
  return { text: statement.text, values: statement.slots.map((read) => read(q)) };
}

function toPeriod(row: Record<string, unknown>): MetricsPeriod {
  const period = { timestamp: new Date(row.ts as string | Date) } as MetricsPeriod;
  for (const slug of METRIC_SLUGS) period[slug] = Number(row[slug]);
  return period;
}

/** The figures from the orders and subscriptions themselves, in one pass over the range. */
export async function computeMetricsFromRows(em: EntityManager, q: MetricsQuery): Promise<MetricsPeriod[]> {
  const params = new SqlParams();
  const periods = periodsSql(q, params);
  const orderFilter = filterSql('o', q, params);
  const subFilter = filterSql('s', q, params);
  const sql = `
    with periods as (${periods}),
    numbered as (select ts, p_start, p_end, row_number() over (order by ts) as k from periods),
    bounds as (
      select min(p_start) as lo, max(p_end) as hi,
             array_agg(p_start order by p_start) as starts, array_agg(p_end order by p_end) as ends
      from periods
    ),
    paid_orders as (
      select o.created_at, o.net_amount, o.subscription_id, s.started_at as sub_started_at,
             b.starts[width_bucket(o.created_at, b.starts)] as p_key
      from orders o
      left join subscriptions s on s.id = o.subscription_id
      cross join bounds b
      where ${orderFilter}
        and o.status <> 'pending'
        and o.created_at >= b.lo and o.created_at < b.hi
    ),
    subs as (
      select s.started_at, s.ended_at,
             case when s.recurring_interval = 'year' then round(s.amount::numeric / 12) else s.amount end as mrr,
             b.starts[width_bucket(s.started_at, b.starts)] as p_key,
             width_bucket(s.started_at, b.ends) as started_before,
             width_bucket(s.ended_at, b.starts) as ended_before
      from subscriptions s
      cross join bounds b
      where ${subFilter}
        and s.started_at is not null and s.started_at < b.hi
        and (s.ended_at is null or s.ended_at >= b.lo)
    ),
    order_figures as (
      select p.ts,
             count(*) as orders,
             sum(po.net_amount) as revenue,
             ceil(avg(po.net_amount)) as average_order_value,
             count(*) filter (where po.subscription_id is null) as one_time_products,
             sum(po.net_amount) filter (where po.subscription_id is null) as one_time_products_revenue,
             sum(po.net_amount) filter (where po.sub_started_at >= p.p_start and po.sub_started_at < p.p_end) as new_subscriptions_revenue,
             count(distinct po.subscription_id) filter (where po.sub_started_at < p.p_start) as renewed_subscriptions,
             sum(po.net_amount) filter (where po.sub_started_at < p.p_start) as renewed_subscriptions_revenue
      from numbered p
      join paid_orders po on po.p_key = p.p_start and po.created_at >= p.p_start and po.created_at < p.p_end
      group by p.ts
    ),
    new_subs as (
      select p.ts, count(*) as new_subscriptions
      from numbered p
      join subs su on su.p_key = p.p_start and su.started_at >= p.p_start and su.started_at < p.p_end
      group by p.ts
    ),
    active_deltas as (
      select k, sum(n) as n, sum(m) as m
      from (
        select started_before + 1 as k, 1 as n, mrr as m from subs
        union all
        select greatest(started_before, ended_before) + 1, -1, -mrr from subs where ended_at is not null
      ) d
      group by k
    ),
    ${ACTIVE_AND_FIGURES}
    select ts, orders, revenue, sum(revenue) over (order by ts) as cumulative_revenue, average_order_value,
           one_time_products, one_time_products_revenue, new_subscriptions, new_subscriptions_revenue,
           renewed_subscriptions, renewed_subscriptions_revenue, active_subscriptions, monthly_recurring_revenue
    from figures
    order by ts`;
  const { rows } = await runSql<Record<string, unknown>>(em, sql, params.values);
  return rows.map(toPeriod);
}
