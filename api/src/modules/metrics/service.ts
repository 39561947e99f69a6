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
import type { MetricsInterval } from './limits.ts';

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

export interface MetricsQuery {
  startDate: string;
  endDate: string;
  interval: MetricsInterval;
  timezone: string;
  organizationIds: string[];
  productIds?: string[];
  billingTypes?: ('one_time' | 'recurring')[];
  customerIds?: string[];
}

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
 * The tail both metrics statements share: active subscriptions and MRR as running sums of the
 * `active_deltas` over the `numbered` periods, and every figure per period from `order_figures` and
 * `new_subs` (CTEs each statement defines).
 */
const ACTIVE_AND_FIGURES = `active as (
      select p.ts,
             sum(coalesce(d.n, 0)) over (order by p.k) as active_subscriptions,
             sum(coalesce(d.m, 0)) over (order by p.k) as monthly_recurring_revenue
      from numbered p
      left join active_deltas d on d.k = p.k
    ),
    figures as (
      select p.ts,
             coalesce(o.orders, 0) as orders,
             coalesce(o.revenue, 0) as revenue,
             coalesce(o.average_order_value, 0) as average_order_value,
             coalesce(o.one_time_products, 0) as one_time_products,
             coalesce(o.one_time_products_revenue, 0) as one_time_products_revenue,
             coalesce(n.new_subscriptions, 0) as new_subscriptions,
             coalesce(o.new_subscriptions_revenue, 0) as new_subscriptions_revenue,
             coalesce(o.renewed_subscriptions, 0) as renewed_subscriptions,
             coalesce(o.renewed_subscriptions_revenue, 0) as renewed_subscriptions_revenue,
             a.active_subscriptions,
             a.monthly_recurring_revenue
      from numbered p
      left join order_figures o on o.ts = p.ts
      left join new_subs n on n.ts = p.ts
      join active a on a.ts = p.ts
    )`;

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
 * The periods (ts, p_start, p_end). Hours step through absolute time (a local series would repeat
 * or skip an hour at DST changes); days and longer step through local calendar time, so a day is
 * always the local day.
 */
function periodsSql(q: MetricsQuery, params: SqlParams): string {
  const tz = params.add(q.timezone, 'text');
  // The unit is a whitelisted literal (the zod enum), never user text.
  const unit = `'${q.interval}'`;
  const step = `interval '1 ${q.interval}'`;
  const start = params.add(q.startDate, 'date');
  const end = params.add(q.endDate, 'date');
  return q.interval === 'hour'
    ? `select ts, date_trunc('hour', ts at time zone ${tz}) at time zone ${tz} as p_start,
              date_trunc('hour', ts at time zone ${tz}) at time zone ${tz} + interval '1 hour' as p_end
       from generate_series(${start}::timestamp at time zone ${tz},
                            (${end}::timestamp + interval '1 day' - interval '1 microsecond') at time zone ${tz},
                            interval '1 hour') as ts`
    : `select local_ts at time zone ${tz} as ts,
              date_trunc(${unit}, local_ts) at time zone ${tz} as p_start,
              (date_trunc(${unit}, local_ts) + ${step}) at time zone ${tz} as p_end
       from generate_series(${start}::timestamp, ${end}::timestamp + interval '1 day' - interval '1 microsecond', ${step}) as local_ts`;
}

/** Period class of the aggregates: its gaps are clamped beyond the longest period of the interval. */
const BUCKET_CLASS: Record<MetricsInterval, number> = { hour: 0, day: 0, week: 1, month: 2, year: 3 };

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
 * rows). Same numbers: every figure is an integer.
 */
export async function metricsPeriodsJsonFromBuckets(em: EntityManager, q: MetricsQuery): Promise<string | null> {
  if ((q.customerIds?.length ?? 0) > 1) return null;
  const params = new SqlParams();
  const figures = METRIC_SLUGS.map((slug) => `'${slug}', x.${slug}::bigint`).join(', ');
  const sql = `select coalesce(bool_and(x.aligned), false) as aligned,
      json_agg(json_build_object('timestamp', ${isoSql('x.ts')}, ${figures}) order by x.ts)::text as body
    from (${bucketsSql(q, params)}) x`;
  const rows = await preparedRows<{ aligned: boolean; body: string | null }>(em, sql, params.values);
  return rows[0]?.aligned && rows[0].body !== null ? rows[0].body : null;
}

/** The statement of `computeMetricsFromBuckets` (its text varies with the interval and which filters are given, never with values). */
function bucketsSql(q: MetricsQuery, params: SqlParams): string {
  const periods = periodsSql(q, params);
  const orgs = params.add(q.organizationIds, 'uuid[]');
  const product = q.productIds?.length ? params.add(q.productIds[0], 'uuid') : null;
  const customer = q.customerIds?.length ? params.add(q.customerIds[0], 'uuid') : null;
  const productOf = (alias: string) =>
    (product ? ` and ${alias}.product_id = ${product}` : '') + (customer ? ` and ${alias}.customer_id = ${customer}` : '');
  const orderBuckets = customer ? 'metrics_customer_order_buckets' : 'metrics_order_buckets';
  const subscriptionBuckets = customer ? 'metrics_customer_subscription_buckets' : 'metrics_subscription_buckets';
  const renewGap = product ? 'renew_gap_product' : 'renew_gap_org';
  return `
    with periods as (${periods}),
    numbered as (
      select ts, p_start, p_end, row_number() over (order by ts) as k,
             extract(epoch from p_start) as ps_s, extract(epoch from p_end) as pe_s
      from periods
    ),
    bounds as (
      select min(p_start) as lo, max(p_end) as hi,
             array_agg(p_start order by p_start) as starts, array_agg(p_end order by p_end) as ends,
             bool_and(ps_s % 900 = 0 and pe_s % 900 = 0) as aligned,
             (min(ps_s) / 900)::int as lo_b, (max(pe_s) / 900)::int as hi_b,
             array_agg((ps_s / 900)::int order by ps_s) as starts_b, array_agg((pe_s / 900)::int order by pe_s) as ends_b
      from numbered
    ),
    buckets as (
      select (n.ps_s / 900)::int as ps, (n.pe_s / 900)::int as pe, n.*
      from numbered n
    ),
    order_rows as (
      select r.bucket, r.kind, r.start_gap, r.${renewGap} as renew_gap, r.n, r.net,
             b.starts_b[width_bucket(r.bucket, b.starts_b)] as p_key
      from bounds b
      join ${orderBuckets} r on r.organization_id = any(${orgs}) and r.class = ${BUCKET_CLASS[q.interval]}
        and r.bucket >= b.lo_b and r.bucket < b.hi_b${productOf('r')}
      where b.aligned
    ),
    order_figures as (
      select p.ts,
             sum(r.n) as orders,
             sum(r.net) as revenue,
             ceil(sum(r.net)::numeric / sum(r.n)::numeric) as average_order_value,
             sum(r.n) filter (where r.kind = 0) as one_time_products,
             sum(r.net) filter (where r.kind = 0) as one_time_products_revenue,
             sum(r.net) filter (where r.kind = 1 and r.start_gap <= r.bucket - p.ps and r.start_gap > r.bucket - p.pe) as new_subscriptions_revenue,
             sum(r.n) filter (where r.kind = 1 and r.renew_gap > r.bucket - p.ps) as renewed_subscriptions,
             sum(r.net) filter (where r.kind = 1 and r.start_gap > r.bucket - p.ps) as renewed_subscriptions_revenue
      from buckets p
      join order_rows r on r.p_key = p.ps and r.bucket < p.pe
      group by p.ts
    ),
    sub_rows as (
      select s.bucket, s.started_n, s.started_mrr, s.ended_n, s.ended_mrr,
             width_bucket(s.bucket, b.ends_b) + 1 as k_started, width_bucket(s.bucket, b.starts_b) + 1 as k_ended,
             b.starts_b[width_bucket(s.bucket, b.starts_b)] as p_key
      from bounds b
      join ${subscriptionBuckets} s on s.organization_id = any(${orgs}) and s.bucket < b.hi_b${productOf('s')}
      where b.aligned
    ),
    odd_subs as (
      select s.started_at, s.ended_at,
             case when s.recurring_interval = 'year' then round(s.amount::numeric / 12) else s.amount end as mrr,
             width_bucket(s.started_at, b.ends) as started_before,
             width_bucket(s.ended_at, b.starts) as ended_before,
             b.starts[width_bucket(s.started_at, b.starts)] as p_key
      from subscriptions s
      cross join bounds b
      where s.organization_id = any(${orgs})${productOf('s')} and s.ended_at < s.started_at
        and s.started_at < b.hi and s.ended_at >= b.lo and b.aligned
    ),
    new_subs as (
      select ts, sum(n) as new_subscriptions
      from (
        select p.ts, sr.started_n as n
        from buckets p
        join sub_rows sr on sr.p_key = p.ps and sr.bucket < p.pe and sr.started_n <> 0
        union all
        select p.ts, 1
        from numbered p
        join odd_subs os on os.p_key = p.p_start and os.started_at < p.p_end
      ) st
      group by ts
    ),
    active_deltas as (
      select k, sum(n) as n, sum(m) as m
      from (
        select k_started as k, started_n as n, started_mrr as m from sub_rows
        union all
        select k_ended, -ended_n, -ended_mrr from sub_rows
        union all
        select started_before + 1, 1, mrr from odd_subs
        union all
        select greatest(started_before, ended_before) + 1, -1, -mrr from odd_subs
      ) d
      group by k
    ),
    ${ACTIVE_AND_FIGURES}
    select f.ts, orders, revenue, sum(revenue) over (order by f.ts) as cumulative_revenue, average_order_value,
           one_time_products, one_time_products_revenue, new_subscriptions, new_subscriptions_revenue,
           renewed_subscriptions, renewed_subscriptions_revenue, active_subscriptions, monthly_recurring_revenue,
           (select aligned from bounds) as aligned
    from figures f
    order by f.ts`;
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
