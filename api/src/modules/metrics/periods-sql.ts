/**
 * Parts of the metrics statements (service.ts): the query, the periods and the figures' tail.
 */
import type { SqlParams } from '../events/sql.ts';
import type { MetricsInterval } from './limits.ts';

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

/**
 * The tail both metrics statements share: active subscriptions and MRR as running sums of the
 * `active_deltas` over the `numbered` periods, and every figure per period from `order_figures` and
 * `new_subs` (CTEs each statement defines).
 */
export const ACTIVE_AND_FIGURES = `active as (
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
 * The periods (ts, p_start, p_end). Hours step through absolute time (a local series would repeat
 * or skip an hour at DST changes); days and longer step through local calendar time, so a day is
 * always the local day.
 */
export function periodsSql(q: MetricsQuery, params: SqlParams): string {
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
export const BUCKET_CLASS: Record<MetricsInterval, number> = { hour: 0, day: 0, week: 1, month: 2, year: 3 };

