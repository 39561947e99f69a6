/**
 * The metrics computation as it was before it became one pass: for every period, a scan of all the
 * range's orders and subscriptions with the period's conditions spelled out literally. Slow, and
 * kept here only as the reference `computeMetrics` (api/src/modules/metrics/service.ts) must equal.
 */
import type { EntityManager } from '../../api/src/kit/db.ts';
import { SqlParams, runSql } from '../../api/src/modules/events/sql.ts';
import { METRIC_SLUGS, type MetricsPeriod, type MetricsQuery } from '../../api/src/modules/metrics/service.ts';

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

export async function referenceMetrics(em: EntityManager, q: MetricsQuery): Promise<MetricsPeriod[]> {
  const params = new SqlParams();
  const tz = params.add(q.timezone, 'text');
  // The unit is a whitelisted literal (the zod enum), never user text.
  const unit = `'${q.interval}'`;
  const step = `interval '1 ${q.interval}'`;
  const start = params.add(q.startDate, 'date');
  const end = params.add(q.endDate, 'date');
  // Hours step through absolute time (a local series would repeat or skip an hour at DST changes);
  // days and longer step through local calendar time, so a day is always the local day.
  const periodsSql =
    q.interval === 'hour'
      ? `select ts, date_trunc('hour', ts at time zone ${tz}) at time zone ${tz} as p_start,
                date_trunc('hour', ts at time zone ${tz}) at time zone ${tz} + interval '1 hour' as p_end
         from generate_series(${start}::timestamp at time zone ${tz},
                              (${end}::timestamp + interval '1 day' - interval '1 microsecond') at time zone ${tz},
                              interval '1 hour') as ts`
      : `select local_ts at time zone ${tz} as ts,
                date_trunc(${unit}, local_ts) at time zone ${tz} as p_start,
                (date_trunc(${unit}, local_ts) + ${step}) at time zone ${tz} as p_end
         from generate_series(${start}::timestamp, ${end}::timestamp + interval '1 day' - interval '1 microsecond', ${step}) as local_ts`;
  const orderFilter = filterSql('o', q, params);
  const subFilter = filterSql('s', q, params);
  const sql = `
    with periods as (${periodsSql}),
    bounds as (select min(p_start) as lo, max(p_end) as hi from periods),
    paid_orders as (
      select o.created_at, o.net_amount, o.subscription_id, s.started_at as sub_started_at
      from orders o
      left join subscriptions s on s.id = o.subscription_id
      cross join bounds b
      where ${orderFilter}
        and o.status <> 'pending'
        and o.created_at >= b.lo and o.created_at < b.hi
    ),
    subs as (
      select s.started_at, s.ended_at, s.amount, s.recurring_interval
      from subscriptions s
      cross join bounds b
      where ${subFilter}
        and s.started_at is not null and s.started_at < b.hi
        and (s.ended_at is null or s.ended_at >= b.lo)
    ),
    figures as (
      select p.ts, om.*, sm.*
      from periods p
      cross join lateral (
        select count(*) as orders,
               coalesce(sum(po.net_amount), 0) as revenue,
               coalesce(ceil(avg(po.net_amount)), 0) as average_order_value,
               count(*) filter (where po.subscription_id is null) as one_time_products,
               coalesce(sum(po.net_amount) filter (where po.subscription_id is null), 0) as one_time_products_revenue,
               coalesce(sum(po.net_amount) filter (where po.sub_started_at >= p.p_start and po.sub_started_at < p.p_end), 0)
                 as new_subscriptions_revenue,
               count(distinct po.subscription_id) filter (where po.sub_started_at < p.p_start) as renewed_subscriptions,
               coalesce(sum(po.net_amount) filter (where po.sub_started_at < p.p_start), 0) as renewed_subscriptions_revenue
        from paid_orders po
        where po.created_at >= p.p_start and po.created_at < p.p_end
      ) om
      cross join lateral (
        select count(*) filter (where su.started_at >= p.p_start and su.started_at < p.p_end) as new_subscriptions,
               count(*) filter (where su.started_at < p.p_end and (su.ended_at is null or su.ended_at >= p.p_start))
                 as active_subscriptions,
               coalesce(sum(case when su.recurring_interval = 'year' then round(su.amount::numeric / 12) else su.amount end)
                 filter (where su.started_at < p.p_end and (su.ended_at is null or su.ended_at >= p.p_start)), 0)
                 as monthly_recurring_revenue
        from subs su
      ) sm
    )
    select ts, orders, revenue, sum(revenue) over (order by ts) as cumulative_revenue, average_order_value,
           one_time_products, one_time_products_revenue, new_subscriptions, new_subscriptions_revenue,
           renewed_subscriptions, renewed_subscriptions_revenue, active_subscriptions, monthly_recurring_revenue
    from figures
    order by ts`;
  const { rows } = await runSql<Record<string, unknown>>(em, sql, params.values);
  return rows.map((row) => {
    const period = { timestamp: new Date(row.ts as string | Date) } as MetricsPeriod;
    for (const slug of METRIC_SLUGS) period[slug] = Number(row[slug]);
    return period;
  });
}
