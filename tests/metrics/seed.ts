/**
 * Seeding for the metrics tests: orders and subscriptions written straight into the test database
 * with chosen amounts and dates (raw SQL, so the rows look exactly as the stated columns say).
 */
import { randomUUID } from 'node:crypto';
import { runSql } from '../../api/src/modules/events/sql.ts';
import type { TestServer } from '../harness.ts';

export interface SeedRefs {
  organizationId: string;
  customerId: string;
  productId: string;
  priceId: string;
}

export async function insertSubscription(
  srv: TestServer,
  refs: SeedRefs,
  s: { amount: number; interval: 'month' | 'year'; startedAt: string; endedAt?: string | null },
): Promise<string> {
  const id = randomUUID();
  const ended = s.endedAt ?? null;
  await runSql(
    srv.deps.orm.em.fork(),
    `insert into subscriptions (id, created_at, organization_id, customer_id, product_id, price_id, amount, currency,
       recurring_interval, status, current_period_start, current_period_end, cancel_at_period_end, started_at, ended_at, metadata)
     values ($1, $2, $3, $4, $5, $6, $7, 'usd', $8, $9, $2, null, false, $2, $10, '{}'::jsonb)`,
    [id, s.startedAt, refs.organizationId, refs.customerId, refs.productId, refs.priceId, s.amount, s.interval, ended ? 'canceled' : 'active', ended],
  );
  return id;
}

export async function insertOrder(
  srv: TestServer,
  refs: SeedRefs,
  o: {
    net: number;
    tax?: number;
    createdAt: string;
    subscriptionId?: string | null;
    billingReason?: 'purchase' | 'subscription_create' | 'subscription_cycle' | 'subscription_update';
    status?: 'pending' | 'paid' | 'refunded' | 'partially_refunded';
  },
): Promise<string> {
  const id = randomUUID();
  const tax = o.tax ?? 0;
  const reason = o.billingReason ?? (o.subscriptionId ? 'subscription_cycle' : 'purchase');
  await runSql(
    srv.deps.orm.em.fork(),
    `insert into orders (id, created_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status,
       billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, refunded_amount,
       refunded_tax_amount, currency, custom_field_data, metadata)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, $10, $11, $12, 0, 0, 'usd', '{}'::jsonb, '{}'::jsonb)`,
    [id, o.createdAt, refs.organizationId, refs.customerId, refs.productId, refs.priceId, o.subscriptionId ?? null, o.status ?? 'paid', reason, o.net, tax, o.net + tax],
  );
  return id;
}
