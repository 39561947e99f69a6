/**
 * The metrics statement over the aggregates (see docs/performance.md, metrics, and service.ts
 * `computeMetricsFromBuckets`).
 */
import { SqlParams } from '../events/sql.ts';
import { ACTIVE_AND_FIGURES, BUCKET_CLASS, periodsSql, type MetricsQuery } from './periods-sql.ts';

/** The statement of `computeMetricsFromBuckets` and its parameters (for EXPLAIN in bench/metrics.ts). */
export function bucketsStatement(q: MetricsQuery): { text: string; values: unknown[] } {
  const params = new SqlParams();
  const text = bucketsSql(q, params);
  return { text, values: params.values };
}

/** The statement of `computeMetricsFromBuckets` (its text varies with the interval and which filters are given, never with values). */
export function bucketsSql(q: MetricsQuery, params: SqlParams): string {
  const periods = periodsSql(q, params);
  const orgs = params.add(q.organizationIds, 'uuid[]');
  const product = q.productIds?.length ? params.add(q.productIds[0], 'uuid') : null;
  const customer = q.customerIds?.length ? params.add(q.customerIds[0], 'uuid') : null;
  const productOf = (alias: string) =>
    (product ? ` and ${alias}.product_id = ${product}` : '') + (customer ? ` and ${alias}.customer_id = ${customer}` : '');
  const orderBuckets = customer ? 'metrics_customer_order_buckets' : 'metrics_order_buckets';
  const subscriptionBuckets = customer ? 'metrics_customer_subscription_buckets' : 'metrics_subscription_buckets';
  const renewGap = product ? 'renew_gap_product' : 'renew_gap_org';
  const subscriptionCoarse = customer ? 'metrics_customer_subscription_coarse' : 'metrics_subscription_coarse';
  const subRow = 's.bucket, s.started_n, s.started_mrr, s.ended_n, s.ended_mrr';
  // Subscriptions: the days before the range's first day from the day rows, then hours and split hours as for orders.
  const orderRow = `r.bucket, r.kind, r.start_gap, r.${renewGap} as renew_gap, r.n, r.net`;
  // Hour and day periods (class 0): the hours that lie within one period from the hour rows, the
  // split hours (a period edge inside, off the hour: a :30 or :45 zone) from the quarter-hour rows,
  // one index range per split hour (`offset 0` keeps the planner from scanning the whole range once
  // and filtering it per split hour).
  // One customer's daily periods that are all UTC days (`utc_days`, known only at run time: it
  // depends on the zone) read the customer's day rows instead, one per day and gap class.
  const dayRows = customer && q.interval === 'day';
  const orderRows =
    BUCKET_CLASS[q.interval] === 0
      ? `
      select x.*, g.starts_b[width_bucket(x.bucket, g.starts_b)] as p_key
      from grid g
      cross join lateral (
        select ${orderRow}
        from ${customer ? 'metrics_customer_order_hours' : 'metrics_order_hours'} r
        where r.organization_id = any(${orgs}) and r.bucket >= g.lo_b and r.bucket <= g.hi_b - 4 and r.bucket <> all(g.split)${productOf('r')}${
          dayRows ? ' and not (select utc_days from bounds)' : ''
        }
        union all
        select ${orderRow}
        from unnest(g.split) h(h)
        cross join lateral (
          select * from ${orderBuckets} r
          where r.organization_id = any(${orgs}) and r.class = 0
            and r.bucket >= greatest(h.h, g.lo_b) and r.bucket < least(h.h + 4, g.hi_b)${productOf('r')}
          offset 0
        ) r${
          dayRows
            ? `
        union all
        select ${orderRow}
        from metrics_customer_order_days r
        where (select utc_days from bounds) and r.organization_id = any(${orgs}) and r.bucket >= g.lo_b and r.bucket < g.hi_b${productOf('r')}`
            : ''
        }
      ) x
      where g.aligned`
      : `
      select ${orderRow}, b.starts_b[width_bucket(r.bucket, b.starts_b)] as p_key
      from bounds b
      join ${orderBuckets} r on r.organization_id = any(${orgs}) and r.class = ${BUCKET_CLASS[q.interval]}
        and r.bucket >= b.lo_b and r.bucket < b.hi_b${productOf('r')}
      where b.aligned`;
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
             bool_and(ps_s % 86400 = 0 and pe_s - ps_s = 86400) as utc_days,
             (min(ps_s) / 900)::int as lo_b, (max(pe_s) / 900)::int as hi_b,
             array_agg((ps_s / 900)::int order by ps_s) as starts_b, array_agg((pe_s / 900)::int order by pe_s) as ends_b
      from numbered
    ),
    grid as (
      select b.*, "metrics_floor"(b.lo_b, 96) as lo_day,
             coalesce((select array_agg(distinct e & -4) from unnest(b.starts_b || b.hi_b) e where e & 3 <> 0), '{}') as split
      from bounds b
    ),
    buckets as (
      select (n.ps_s / 900)::int as ps, (n.pe_s / 900)::int as pe, n.*
      from numbered n
    ),
    order_rows as (${orderRows}
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
             width_bucket(s.bucket, g.ends_b) + 1 as k_started, width_bucket(s.bucket, g.starts_b) + 1 as k_ended,
             g.starts_b[width_bucket(s.bucket, g.starts_b)] as p_key
      from grid g
      cross join lateral (
        select ${subRow}
        from ${subscriptionCoarse} s
        where s.organization_id = any(${orgs}) and s.grain = 96 and s.bucket < g.lo_day${productOf('s')}
        union all
        select ${subRow}
        from ${subscriptionCoarse} s
        where s.organization_id = any(${orgs}) and s.grain = 4 and s.bucket >= g.lo_day and s.bucket <= g.hi_b - 4
          and s.bucket <> all(g.split)${productOf('s')}
        union all
        select ${subRow}
        from unnest(g.split) h(h)
        cross join lateral (
          select * from ${subscriptionBuckets} s
          where s.organization_id = any(${orgs}) and s.bucket >= greatest(h.h, g.lo_day) and s.bucket < least(h.h + 4, g.hi_b)${productOf('s')}
          offset 0
        ) s
      ) s
      where g.aligned
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

