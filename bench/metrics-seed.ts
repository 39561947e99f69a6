/**
 * The metrics benches' data, written in SQL (bench/metrics.ts, bench/ingest.ts step 4): `orders`
 * orders over the last 30 days (7 in 10 renewals of one of `orders / 10` subscriptions started over
 * the 90 days before, 1 in 50 pending) for one organization, product and price, spread over
 * `customers`. Callers turn the row triggers off around it (`session_replication_role = replica`)
 * and rebuild the aggregates once (`metrics_rebuild()`). Answers the subscriptions' ids.
 */
import type pg from 'pg';

export async function seedMetricsRows(
  db: pg.Client,
  s: { orders: number; organizationId: string; customers: string[]; productId: string; priceId: string },
): Promise<string[]> {
  const subs = Math.max(1, Math.floor(s.orders / 10));
  const subIds = (
    await db.query<{ id: string }>(
      `insert into subscriptions (id, created_at, organization_id, customer_id, product_id, price_id, amount, currency,
         recurring_interval, status, current_period_start, current_period_end, cancel_at_period_end, started_at, ended_at, metadata)
       select gen_random_uuid(), st, $1, ($2::uuid[])[g % $3 + 1], $4, $5, 1000 + g % 5000, 'usd', case when g % 7 = 0 then 'year' else 'month' end,
         case when g % 4 = 0 then 'canceled' else 'active' end, st, null, false, st, case when g % 4 = 0 then st + interval '20 days' end, '{}'::jsonb
       from generate_series(0, $6 - 1) g, lateral (select now() - interval '90 days' + (g::float8 / $6) * interval '89 days' as st) x
       returning id`,
      [s.organizationId, s.customers, s.customers.length, s.productId, s.priceId, subs],
    )
  ).rows.map((r) => r.id);
  for (let from = 0; from < s.orders; from += 500_000) {
    const to = Math.min(s.orders, from + 500_000) - 1;
    await db.query(
      `insert into orders (id, created_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status,
         billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, refunded_amount,
         refunded_tax_amount, currency, custom_field_data, metadata)
       select gen_random_uuid(), now() - interval '30 days' + (g::float8 / $1) * interval '30 days', $2, ($3::uuid[])[g % $4 + 1], $5, $6,
         case when g % 10 < 7 then ($9::uuid[])[g % $10 + 1] end, case when g % 50 = 0 then 'pending' else 'paid' end,
         case when g % 10 < 7 then 'subscription_cycle' else 'purchase' end, 500 + g % 9000, 0, 500 + g % 9000, 0, 500 + g % 9000, 0, 0, 'usd', '{}'::jsonb, '{}'::jsonb
       from generate_series($7::int, $8::int) g`,
      [s.orders, s.organizationId, s.customers, s.customers.length, s.productId, s.priceId, from, to, subIds, subIds.length],
    );
  }
  return subIds;
}
