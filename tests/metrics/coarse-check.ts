/**
 * The coarse metrics aggregates as the order and subscription triggers keep them, next to the same
 * rows computed from the orders' facts and the subscriptions themselves (what `metrics_rebuild()`
 * builds), for one organization. Equal lists mean the triggers followed every insert, late row,
 * status change, correction and delete.
 */
import { runSql } from '../../api/src/modules/events/sql.ts';
import type { EntityManager } from '../../api/src/kit/db.ts';

const gap = (of: string) => `case when f.kind = 1 then greatest(-104, least(104, (f.bucket & -4) - f.${of})) else 0 end`;

/** A day row's gap: the subscription's start (or last order) before the order's UTC day (1), within it (0), after it (-96). */
const dayGap = (of: string) =>
  `case when f.kind <> 1 then 0 when f.${of} < metrics_floor(f.bucket, 96) then 1 when f.${of} < metrics_floor(f.bucket, 96) + 96 then 0 else -96 end`;

const subscriptionEvents = `
  select organization_id, customer_id, metrics_bucket(started_at) as bucket, product_id, 1 as sn, metrics_subscription_mrr(amount, recurring_interval) as sm, 0 as en, 0 as em
  from subscriptions where organization_id = $1 and started_at is not null and (ended_at is null or ended_at >= started_at)
  union all
  select organization_id, customer_id, metrics_bucket(ended_at), product_id, 0, 0, 1, metrics_subscription_mrr(amount, recurring_interval)
  from subscriptions where organization_id = $1 and started_at is not null and ended_at >= started_at`;

const PAIRS: Record<string, [string, string]> = {
  'order hours': [
    `select bucket, product_id, kind, start_gap, renew_gap_org, renew_gap_product, n, net from metrics_order_hours where organization_id = $1 order by 1, 2, 3, 4, 5, 6`,
    `select f.bucket & -4 as b, f.product_id, f.kind, ${gap('start_bucket')} as g1, ${gap('renew_bucket_org')} as g2, ${gap('renew_bucket_product')} as g3, count(*) as n, sum(f.net) as net
     from metrics_order_facts f where f.organization_id = $1 group by 1, 2, 3, 4, 5, 6 order by 1, 2, 3, 4, 5, 6`,
  ],
  'customer order hours': [
    `select customer_id, bucket, product_id, kind, start_gap, renew_gap_org, renew_gap_product, n, net from metrics_customer_order_hours
     where organization_id = $1 order by 1, 2, 3, 4, 5, 6, 7`,
    `select f.customer_id, f.bucket & -4 as b, f.product_id, f.kind, ${gap('start_bucket')} as g1, ${gap('renew_bucket_customer')} as g2, ${gap('renew_bucket_customer_product')} as g3,
            count(*) as n, sum(f.net) as net
     from metrics_order_facts f where f.organization_id = $1 group by 1, 2, 3, 4, 5, 6, 7 order by 1, 2, 3, 4, 5, 6, 7`,
  ],
  'customer order days': [
    `select customer_id, bucket, product_id, kind, start_gap, renew_gap_org, renew_gap_product, n, net from metrics_customer_order_days
     where organization_id = $1 order by 1, 2, 3, 4, 5, 6, 7`,
    `select f.customer_id, metrics_floor(f.bucket, 96) as b, f.product_id, f.kind, ${dayGap('start_bucket')} as g1, ${dayGap('renew_bucket_customer')} as g2,
            ${dayGap('renew_bucket_customer_product')} as g3, count(*) as n, sum(f.net) as net
     from metrics_order_facts f where f.organization_id = $1 group by 1, 2, 3, 4, 5, 6, 7 order by 1, 2, 3, 4, 5, 6, 7`,
  ],
  'subscription hours and days': [
    `select grain, bucket, product_id, started_n, started_mrr, ended_n, ended_mrr from metrics_subscription_coarse where organization_id = $1 order by 1, 2, 3`,
    `select g.grain, metrics_floor(d.bucket, g.grain) as b, product_id, sum(sn) as sn, sum(sm) as sm, sum(en) as en, sum(em) as em
     from (${subscriptionEvents}) d cross join (values (4), (96)) g(grain) group by 1, 2, 3 order by 1, 2, 3`,
  ],
  'customer subscription hours and days': [
    `select customer_id, grain, bucket, product_id, started_n, started_mrr, ended_n, ended_mrr from metrics_customer_subscription_coarse
     where organization_id = $1 order by 1, 2, 3, 4`,
    `select customer_id, g.grain, metrics_floor(d.bucket, g.grain) as b, product_id, sum(sn) as sn, sum(sm) as sm, sum(en) as en, sum(em) as em
     from (${subscriptionEvents}) d cross join (values (4), (96)) g(grain) group by 1, 2, 3, 4 order by 1, 2, 3, 4`,
  ],
};

/** Per coarse table: the rows the triggers keep and the rows recomputed from the source (each a list of value lists). */
export async function coarseAggregates(em: EntityManager, organizationId: string): Promise<Record<string, { kept: string[]; recomputed: string[] }>> {
  const out: Record<string, { kept: string[]; recomputed: string[] }> = {};
  const lines = async (sql: string) =>
    (await runSql<Record<string, unknown>>(em, sql, [organizationId])).rows.map((r) => Object.values(r).map(String).join(' '));
  for (const [name, [kept, recomputed]] of Object.entries(PAIRS)) out[name] = { kept: await lines(kept), recomputed: await lines(recomputed) };
  return out;
}
