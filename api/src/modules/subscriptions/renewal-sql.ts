/**
 * The common renewal in plain SQL: a billable subscription, not set to cancel, whose period ends at the
 * expected time, renewed and charged with the saved card. Everything else (a retry after the period
 * rolled, cancel at period end, a subscription changed meanwhile, a trial's or a past-due subscription's
 * charge, a decline, a changed card) is answered by the ORM path (renewal.ts `renewPeriod`, charging.ts),
 * which this falls back to; both write the same rows and the same events.
 *
 * An exception to "one transaction owner" (CONVENTIONS): no explicit transaction. Each write is ONE
 * statement (PostgreSQL runs it as its own transaction, all of it or nothing), guarded by the row
 * version (`xmin`) of the subscription read before it, so a change in between makes it write nothing
 * and the ORM path takes over under the row lock. Per renewal: one read (the subscription with what
 * its order and events need, their read models built by PostgreSQL), the usage statement
 * (`meterFigures`, only with metered prices), one write (period, order, metered billings, events), the
 * processor's charge (after that write committed: never inside a transaction), one write of the outcome.
 * Statements are named prepared statements (planned once per connection).
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { EntityManager } from '../../kit/db.ts';
import type { OrderLine } from '../orders/entities.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { periodEnd } from '../pricing/index.ts';
import type { DiscountDuration, DiscountTerms } from '../pricing/index.ts';
import { customerJsonSql, userJsonSql } from '../customers/read-sql.ts';
import type { Aggregation, Filter } from '../meters/entities.ts';
import { meterFigures, usageLines, type MeterFigures } from '../usage/service.ts';
import type { WebhookEventType } from '../webhooks/outbox.ts';
import type { Subscription, SubscriptionStatus } from './entities.ts';
import { priceJsonSql, productJsonSql } from '../products/read-sql.ts';
import { discountBaseJsonSql, subscriptionBaseJsonSql } from './read-sql.ts';
import { cycleQuoteOf, type RenewResult, type UsageSettings } from './renewal.ts';
import { isBillable } from './rules.ts';
import { serializeSubscriptionBase } from './schemas.ts';

/** Off only to measure the ORM path against it (bench/usage-renewals `--orm-path`). */
let enabled = true;
export function setPlainSqlRenewals(on: boolean): void {
  enabled = on;
}

type Json = Record<string, unknown>;
type RenewAndChargeResult = Extract<RenewResult, { outcome: 'charge' }> & { paid: boolean; message: string | null };

async function run<T>(em: EntityManager, text: string, values: unknown[]): Promise<T[]> {
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  const name = `renew_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  return (await pool.query({ name, text, values })).rows as T[];
}

interface Row {
  id: string;
  version: string;
  organization_id: string;
  customer_id: string;
  product_id: string;
  price_id: string;
  discount_id: string | null;
  checkout_id: string | null;
  amount: number;
  currency: string;
  recurring_interval: 'month' | 'year';
  status: SubscriptionStatus;
  current_period_start: Date;
  current_period_end: Date | null;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  started_at: Date | null;
  ends_at: Date | null;
  ended_at: Date | null;
  trial_start: Date | null;
  trial_end: Date | null;
  customer_cancellation_reason: Subscription['customerCancellationReason'];
  customer_cancellation_comment: string | null;
  payment_method_id: string | null;
  pending_proration_amount: number;
  metadata: Subscription['metadata'];
  created_at: Date;
  modified_at: Date | null;
  product_name: string;
  amount_type: 'fixed' | 'custom' | 'free' | 'metered_unit';
  price_amount: number | null;
  external_id: string | null;
  billing_address: Record<string, string | null | undefined> | null;
  processor_customer_id: string | null;
  d_type: string | null;
  d_basis_points: number | null;
  d_amount: number | null;
  d_duration: string | null;
  d_duration_in_months: number | null;
  d_applies: boolean | null;
  tax_bp: number;
  benefits: number;
  metered: { id: string; unitAmount: string; capAmount: number | null; meter: { id: string; name: string; filter: Filter; aggregation: Aggregation } }[];
  pm_id: string | null;
  pm_processor_id: string | null;
  customer_json: Json;
  user_json: Json;
  product_json: Json;
  price_json: Json;
  discount_json: Json | null;
}

let readSql: string | undefined;
/** $1 subscription id, $2 the processor's name (the customer's default card of that processor, else the subscription's). */
function renewalReadSql(): string {
  return (readSql ??= `select s.id, s.xmin::text as version, s.organization_id, s.customer_id, s.product_id, s.price_id, s.discount_id,
      s.checkout_id, s.amount, s.currency, s.recurring_interval, s.status, s.current_period_start, s.current_period_end,
      s.cancel_at_period_end, s.canceled_at, s.started_at, s.ends_at, s.ended_at, s.trial_start, s.trial_end,
      s.customer_cancellation_reason, s.customer_cancellation_comment, s.payment_method_id, s.pending_proration_amount,
      s.metadata, s.created_at, s.modified_at,
      p.name as product_name, pp.amount_type, pp.price_amount,
      c.external_id, c.billing_address, c.processor_customer_id,
      d.type as d_type, d.basis_points as d_basis_points, d.amount as d_amount, d.duration as d_duration,
      d.duration_in_months as d_duration_in_months,
      (d.deleted_at is null and (not exists (select 1 from discount_products dp where dp.discount_id = d.id)
        or exists (select 1 from discount_products dp where dp.discount_id = d.id and dp.product_id = s.product_id))) as d_applies,
      coalesce((select tr.basis_points from tax_rates tr where tr.organization_id = s.organization_id
        and tr.country = upper(nullif(c.billing_address->>'country', ''))), 0) as tax_bp,
      (select count(*) from product_benefits pb join benefits b on b.id = pb.benefit_id
        where pb.product_id = s.product_id and b.deleted_at is null)::int as benefits,
      (select coalesce(json_agg(json_build_object('id', mp.id, 'unitAmount', mp.unit_amount::text, 'capAmount', mp.cap_amount,
          'meter', json_build_object('id', m.id, 'name', m.name, 'filter', m.filter, 'aggregation', m.aggregation))
          order by mp.created_at, mp.id), '[]'::json)
        from product_prices mp join meters m on m.id = mp.meter_id
        where mp.product_id = s.product_id and mp.amount_type = 'metered_unit' and not mp.is_archived and mp.unit_amount is not null) as metered,
      pm.id as pm_id, pm.processor_id as pm_processor_id,
      ${customerJsonSql('c')} as customer_json, ${userJsonSql('c')} as user_json, ${productJsonSql('s.product_id')} as product_json,
      ${priceJsonSql('pp', 'p')} as price_json, ${discountBaseJsonSql('d')} as discount_json
    from subscriptions s join products p on p.id = s.product_id join product_prices pp on pp.id = s.price_id
      join customers c on c.id = s.customer_id left join discounts d on d.id = s.discount_id
      left join lateral (select x.id, x.processor_id from payment_methods x
        where x.deleted_at is null and ((x.customer_id = s.customer_id and x.is_default and x.processor = $2) or x.id = s.payment_method_id)
        order by (x.customer_id = s.customer_id and x.is_default and x.processor = $2) desc limit 1) pm on true
    where s.id = $1`);
}

/** The period, order, metered billings and events, written only if the subscription row is still the version read. */
const WRITE_SQL = `with s as (
    update subscriptions set current_period_start = $2, current_period_end = $3, status = $4, pending_proration_amount = $5,
      discount_id = $6, amount = $7, modified_at = $8
    where id = $1 and xmin = $9::text::xid returning id
  ), o as (
    insert into orders (id, created_at, modified_at, organization_id, customer_id, product_id, product_price_id, discount_id,
      subscription_id, checkout_id, status, billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount,
      refunded_amount, refunded_tax_amount, currency, billing_address, custom_field_data, metadata, processor_charge_id, lines)
    select $10, $8, null, $11, $12, $13, $14, $15, s.id, null, $16, 'subscription_cycle', $17, $18, $19, $20, $21, 0, 0, $22, $23::jsonb,
      '{}'::jsonb, '{}'::jsonb, null, $24::jsonb from s returning id
  ), mb as (
    insert into metered_billings (id, created_at, modified_at, subscription_id, customer_id, meter_id, price_id, order_id, period_start,
      period_end, billed_through, usage, credits_used, billable_units, unit_amount, cap_amount, amount)
    select x.id, $8, null, $1, $12, x.meter_id, x.price_id, o.id, x.period_start, x.period_end, x.billed_through, x.usage, x.credits_used,
      x.billable_units, x.unit_amount, x.cap_amount, x.amount
    from o cross join jsonb_to_recordset($25::jsonb) as x(id uuid, meter_id uuid, price_id uuid, period_start timestamptz,
      period_end timestamptz, billed_through timestamptz, usage numeric, credits_used numeric, billable_units numeric, unit_amount numeric,
      cap_amount int, amount int)
  ), ev as (
    insert into outbox_events (id, created_at, modified_at, organization_id, type, data, dispatched_at)
    select x.id, $8, null, $11, x.type, x.data, null from s cross join jsonb_to_recordset($26::jsonb) as x(id uuid, type text, data jsonb)
  )
  select count(*)::int as n from s`;

let paidSql: string | undefined;
/** The order paid and its events (their `subscription` from the row as locked now), only for an active subscription on the card charged. */
function paidWriteSql(): string {
  return (paidSql ??= `with ls as (select * from subscriptions where id = $1 for update), o as (
      update orders set status = 'paid', processor_charge_id = $3, modified_at = $4 from ls
      where orders.id = $2 and orders.status = 'pending' and ls.status = 'active' and ls.payment_method_id = $5::uuid
      returning orders.id
    ), ev as (
      insert into outbox_events (id, created_at, modified_at, organization_id, type, data, dispatched_at)
      select x.id, $4, null, $6, x.type, $7::jsonb || jsonb_build_object('subscription', ${subscriptionBaseJsonSql('ls')}), null
      from o cross join ls cross join jsonb_to_recordset($8::jsonb) as x(id uuid, type text)
    )
    select (select count(*) from o)::int as n`);
}

const iso = (d: Date | string | null) => (d == null ? null : new Date(d).toISOString());

/**
 * renewAndChargeSubscription's common case in plain SQL; null when this is not the common case or the
 * subscription changed meanwhile (nothing written: the caller runs the ORM path). `recordOutcome`
 * writes a charge's outcome the ORM way when it is not the common one (trial, past due, decline).
 */
export async function renewAndChargeInSql(
  em: EntityManager,
  processor: PaymentProcessor,
  id: string,
  expectedPeriodEnd: string,
  usage: UsageSettings,
  recordOutcome: (orderId: string, subscriptionId: string, paymentMethodId: string | null, result: Awaited<ReturnType<PaymentProcessor['chargeOffSession']>> | null) => Promise<{ status?: SubscriptionStatus }>,
): Promise<RenewAndChargeResult | null> {
  if (!enabled) return null;
  const [r] = await run<Row>(em, renewalReadSql(), [id, processor.name]);
  if (!r || !r.current_period_end || r.cancel_at_period_end || iso(r.current_period_end) !== expectedPeriodEnd) return null;
  const endedAt = r.ended_at ? new Date(r.ended_at) : null;
  if (!isBillable({ status: r.status, endedAt } as Subscription)) return null;

  const end = new Date(r.current_period_end);
  const start = new Date(r.current_period_start);
  const startedAt = new Date(r.started_at ?? r.created_at);
  // Usage of the period that ends, up to the database's clock minus the settle time (renewal.ts, usage/service.ts).
  let usageQuotes: ReturnType<typeof usageLines<Row['metered'][number]>> = [];
  let billedThrough: Date | null = null;
  if (r.metered.length) {
    const meters = [...new Map(r.metered.map((p) => [p.meter.id, p.meter])).values()];
    const f = await meterFigures(em, {
      organizationId: r.organization_id,
      subscriptionId: r.id,
      customer: { id: r.customer_id, externalId: r.external_id },
      meters,
      periodStart: start,
      periodEnd: end,
      billedThrough: { settleMs: usage.settleMs },
    });
    billedThrough = f.billedThrough;
    usageQuotes = usageLines(r.metered, new Map<string, MeterFigures>(meters.map((m, i) => [m.id, f.figures[i]!])));
  }
  const discount: { terms: DiscountTerms; duration: DiscountDuration } | null =
    r.discount_id && r.d_applies
      ? {
          terms: r.d_type === 'percentage' ? { type: 'percentage', basis_points: r.d_basis_points ?? 0 } : { type: 'fixed', amount: r.d_amount ?? 0 },
          duration:
            r.d_duration === 'repeating'
              ? { duration: 'repeating', durationInMonths: r.d_duration_in_months ?? 1 }
              : { duration: r.d_duration as 'once' | 'forever' },
        }
      : null;
  const priceAmount = r.amount_type === 'fixed' ? (r.price_amount ?? 0) : 0;
  const { amounts: a, lines } = cycleQuoteOf({
    final: false,
    price: { id: r.price_id, amountType: r.amount_type, priceAmount: r.price_amount },
    productName: r.product_name,
    discount,
    startedAt,
    periodEnd: end,
    pendingProrationAmount: r.pending_proration_amount,
    taxBasisPoints: r.tax_bp,
    usage: usageQuotes.map((q) => ({ price: q.price, meter: q.price.meter, line: q.line })),
  });

  // The subscription after the renewal (renewal.ts renewPeriod, the same rules).
  const next = periodEnd(end, r.recurring_interval, new Date(r.trial_end ?? startedAt).getUTCDate());
  const trialConverted = r.status === 'trialing' && a.total === 0;
  const status: SubscriptionStatus = trialConverted ? 'active' : r.status;
  const discountId = a.discountApplied ? r.discount_id : null;
  const amount = a.discount ? priceAmount - a.discount : priceAmount;
  const now = new Date();
  const subBase = serializeSubscriptionBase({
    id: r.id,
    createdAt: new Date(r.created_at),
    modifiedAt: now,
    metadata: r.metadata,
    amount,
    currency: r.currency,
    recurringInterval: r.recurring_interval,
    status,
    currentPeriodStart: end,
    currentPeriodEnd: next,
    cancelAtPeriodEnd: r.cancel_at_period_end,
    canceledAt: r.canceled_at ? new Date(r.canceled_at) : null,
    startedAt: r.started_at ? new Date(r.started_at) : null,
    endsAt: r.ends_at ? new Date(r.ends_at) : null,
    endedAt,
    trialStart: r.trial_start ? new Date(r.trial_start) : null,
    trialEnd: r.trial_end ? new Date(r.trial_end) : null,
    customer: { id: r.customer_id },
    product: { id: r.product_id },
    price: { id: r.price_id },
    discount: discountId ? { id: discountId } : null,
    checkout: r.checkout_id ? { id: r.checkout_id } : null,
    customerCancellationReason: r.customer_cancellation_reason,
    customerCancellationComment: r.customer_cancellation_comment,
  } as unknown as Subscription);
  const subData = { ...subBase, customer: r.customer_json, user: r.user_json, product: r.product_json, price: r.price_json, discount: discountId ? r.discount_json : null };

  const orderId = randomUUID();
  const orderLines: OrderLine[] | null = usageQuotes.length ? lines : null;
  const orderStatus = a.total === 0 ? 'paid' : 'pending';
  const orderData = (st: 'pending' | 'paid', modified: string | null): Json => {
    const created = now.toISOString();
    const ba = r.billing_address;
    return {
      id: orderId,
      created_at: created,
      modified_at: modified,
      metadata: {},
      custom_field_data: {},
      status: st,
      paid: st !== 'pending',
      subtotal_amount: a.subtotal,
      discount_amount: a.discount,
      net_amount: a.net,
      amount: a.net,
      tax_amount: a.tax,
      total_amount: a.total,
      refunded_amount: 0,
      refunded_tax_amount: 0,
      currency: r.currency,
      billing_reason: 'subscription_cycle',
      billing_address: ba
        ? { line1: ba.line1 ?? null, line2: ba.line2 ?? null, postal_code: ba.postal_code ?? null, city: ba.city ?? null, state: ba.state ?? null, country: ba.country }
        : null,
      customer_id: r.customer_id,
      product_id: r.product_id,
      product_price_id: r.price_id,
      discount_id: discountId,
      subscription_id: r.id,
      checkout_id: null,
      customer: r.customer_json,
      user_id: r.customer_id,
      user: r.user_json,
      product: r.product_json,
      product_price: r.price_json,
      discount: discountId ? r.discount_json : null,
      subscription: subBase,
      items: orderLines
        ? orderLines.map((l) => ({ id: l.id, created_at: created, modified_at: modified, label: l.label, amount: l.amount, tax_amount: l.taxAmount, proration: l.proration, product_price_id: l.productPriceId }))
        : [{ id: orderId, created_at: created, modified_at: modified, label: r.product_name, amount: a.net, tax_amount: a.tax, proration: false, product_price_id: r.price_id }],
    };
  };
  const created = orderData(orderStatus, null);
  const events: { id: string; type: WebhookEventType; data: Json }[] = [
    { id: randomUUID(), type: 'subscription.updated', data: subData },
    ...(trialConverted ? [{ id: randomUUID(), type: 'subscription.active' as const, data: subData }] : []),
    { id: randomUUID(), type: 'order.created', data: created },
    ...(orderStatus === 'paid' ? [{ id: randomUUID(), type: 'order.paid' as const, data: created }] : []),
  ];
  const billings = usageQuotes.map((q) => ({
    id: randomUUID(),
    meter_id: q.price.meter.id,
    price_id: q.price.id,
    period_start: start.toISOString(),
    period_end: end.toISOString(),
    billed_through: billedThrough!.toISOString(),
    usage: q.line.usage,
    credits_used: q.line.creditsUsed,
    billable_units: q.line.billableUnits,
    unit_amount: q.price.unitAmount,
    cap_amount: q.price.capAmount ?? null,
    amount: q.line.amount,
  }));
  const [w] = await run<{ n: number }>(em, WRITE_SQL, [
    r.id, end, next, status, a.carry, discountId, amount, now, r.version,
    orderId, r.organization_id, r.customer_id, r.product_id, r.price_id, discountId, orderStatus,
    a.subtotal, a.discount, a.net, a.tax, a.total, r.currency, r.billing_address == null ? null : JSON.stringify(r.billing_address),
    orderLines ? JSON.stringify(orderLines) : null, JSON.stringify(billings), JSON.stringify(events),
  ]);
  if (!w || w.n !== 1) return null;

  const result = {
    outcome: 'charge' as const,
    orderId,
    total: a.total,
    scope: { customerId: r.customer_id, productId: r.product_id, subscriptionId: r.id, orderId },
    benefits: r.benefits,
    periodEnd: next.toISOString(),
    status,
  };
  if (a.total === 0) return { ...result, paid: true, message: null };

  // The charge, after the order committed (its id keys the charge: a retried activity never charges twice).
  let charged: Awaited<ReturnType<PaymentProcessor['chargeOffSession']>> | null = null;
  if (r.pm_id && r.processor_customer_id) {
    charged = await processor.chargeOffSession({
      amount: a.total,
      currency: r.currency,
      paymentMethodId: r.pm_processor_id!,
      processorCustomerId: r.processor_customer_id,
      idempotencyKey: `order:${orderId}:charge:0`,
      metadata: { order_id: orderId, subscription_id: r.id },
    });
  }
  const paid = charged?.status === 'succeeded';
  if (paid) {
    const at = new Date();
    const paidData = orderData('paid', at.toISOString());
    delete paidData.subscription;
    const types = [{ id: randomUUID(), type: 'order.updated' }, { id: randomUUID(), type: 'order.paid' }];
    const [p] = await run<{ n: number }>(em, paidWriteSql(), [r.id, orderId, charged!.chargeId, at, r.pm_id, r.organization_id, JSON.stringify(paidData), JSON.stringify(types)]);
    if (p?.n === 1) return { ...result, paid: true, message: null, status: 'active' };
  }
  const { status: after } = await recordOutcome(orderId, r.id, r.pm_id, charged);
  const message = paid ? null : charged?.status === 'declined' ? charged.message : 'No saved payment method.';
  return { ...result, paid, message, status: after ?? status };
}
