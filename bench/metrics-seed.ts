/**
 * The metrics benches' data, written in SQL (bench/metrics.ts, bench/ingest.ts step 4): `orders`
 * orders over the last 30 days (7 in 10 renewals of one of `orders / 10` subscriptions started over
 * the 90 days before, 1 in 50 pending) for one organization, product and price, spread over
 * `customers`. Callers turn the row triggers off around it (`session_replication_role = replica`)
 * and rebuild the aggregates once (`metrics_rebuild()`). Answers the subscriptions' ids.
 *
 * Bulk speed (the bench's own database only): ids are time-ordered (like UUIDv7: each table's
 * primary key is appended to, not written at random pages), and the plain secondary indexes of
 * `orders` and `subscriptions` are dropped for the inserts and built again after them (one sort
 * each instead of 10 M random index insertions). Constraint indexes stay.
 */
import type pg from 'pg';

/** The id of row `g` of a seeded table: 32 hex digits, `prefix` then g. */
const seqId = (prefix: string, g: string) => `('${prefix}' || lpad(to_hex(${g}), 24, '0'))::uuid`;

export async function seedMetricsRows(
  db: pg.Client,
  s: { orders: number; organizationId: string; customers: string[]; productId: string; priceId: string },
): Promise<string[]> {
  const subs = Math.max(1, Math.floor(s.orders / 10));
  const indexes = (
    await db.query<{ name: string; def: string }>(
      `select i.indexname as name, i.indexdef as def from pg_indexes i
       where i.schemaname = current_schema() and i.tablename in ('orders', 'subscriptions')
         and not exists (select 1 from pg_constraint c where c.conname = i.indexname)`,
    )
  ).rows;
  for (const i of indexes) await db.query(`drop index "${i.name}"`);
  const tag = Date.now().toString(16).slice(-6).padStart(6, '0');
  await db.query(
    `insert into subscriptions (id, created_at, organization_id, customer_id, product_id, price_id, amount, currency,
       recurring_interval, status, current_period_start, current_period_end, cancel_at_period_end, started_at, ended_at, metadata)
     select ${seqId(`${tag}5b`, 'g')}, st, $1, ($2::uuid[])[g % $3 + 1], $4, $5, 1000 + g % 5000, 'usd', case when g % 7 = 0 then 'year' else 'month' end,
       case when g % 4 = 0 then 'canceled' else 'active' end, st, null, false, st, case when g % 4 = 0 then st + interval '20 days' end, '{}'::jsonb
     from generate_series(0, $6 - 1) g, lateral (select now() - interval '90 days' + (g::float8 / $6) * interval '89 days' as st) x`,
    [s.organizationId, s.customers, s.customers.length, s.productId, s.priceId, subs],
  );
  for (let from = 0; from < s.orders; from += 1_000_000) {
    const to = Math.min(s.orders, from + 1_000_000) - 1;
    await db.query(
      `insert into orders (id, created_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status,
         billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, refunded_amount,
         refunded_tax_amount, currency, custom_field_data, metadata)
       select ${seqId(`${tag}0d`, 'g')}, now() - interval '30 days' + (g::float8 / $1) * interval '30 days', $2, ($3::uuid[])[g % $4 + 1], $5, $6,
         case when g % 10 < 7 then ${seqId(`${tag}5b`, `g % ${subs}`)} end, case when g % 50 = 0 then 'pending' else 'paid' end,
         case when g % 10 < 7 then 'subscription_cycle' else 'purchase' end, 500 + g % 9000, 0, 500 + g % 9000, 0, 500 + g % 9000, 0, 0, 'usd', '{}'::jsonb, '{}'::jsonb
       from generate_series($7::int, $8::int) g`,
      [s.orders, s.organizationId, s.customers, s.customers.length, s.productId, s.priceId, from, to],
    );
  }
  await db.query(`set maintenance_work_mem = '512MB'`);
  for (const i of indexes) await db.query(i.def);
  await db.query('reset maintenance_work_mem');
  return (await db.query<{ id: string }>(`select ${seqId(`${tag}5b`, 'g')} as id from generate_series(0, $1 - 1) g order by g`, [subs])).rows.map(
    (r) => r.id,
  );
}
