/**
 * The subscription's period end, as its workflow runs it: the schedule it sleeps on, the quote of a
 * renewal's order (the next period's price plus the metered usage of the period that ends), and the
 * step that ends a subscription set to cancel or rolls its period and creates the cycle order. Each
 * function works inside the caller's transaction, under the subscription's row lock.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../kit/db.ts';
import type { OrderLine } from '../orders/entities.ts';
import { Order } from '../orders/entities.ts';
import { ORDER_POPULATE, serializeOrder } from '../orders/schemas.ts';
import { allocate, cycleAmounts, periodEnd, type CycleAmounts, type DiscountDuration, type DiscountTerms } from '../pricing/index.ts';
import { discountDuration, discountTerms } from '../pricing/terms.ts';
import type { Product, ProductPrice } from '../products/entities.ts';
import type { Meter } from '../meters/entities.ts';
import type { MeteredLine } from '../pricing/metered.ts';
import { normalizeDecimal } from '../products/schemas.ts';
import { MeteredBilling } from '../usage/entities.ts';
import { meteredPrices, quoteUsage, recordUsage, type UsageQuote } from '../usage/service.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Subscription, type SubscriptionStatus } from './entities.ts';
import { isBillable, isEnded, subscriptionSettings } from './rules.ts';
import { serializeSubscription } from './schemas.ts';
import {
  discountAppliesToProduct,
  emitOrder,
  emitSubscription,
  lockSubscription,
  priceAmountOf,
  scopeOf,
  subscriptionOrder,
  subscriptionTaxBasisPoints,
  type BenefitScopeOut,
} from './state.ts';

export interface UsageSettings {
  /** Events ingested within this long before a renewal wait for the next one (in-flight ingest transactions). */
  settleMs: number;
}
export const DEFAULT_USAGE_SETTINGS: UsageSettings = { settleMs: 10_000 };

export interface CycleQuote {
  amounts: CycleAmounts;
  /** Before discount, summing to `amounts.subtotal`; the discount and tax split over them. */
  lines: OrderLine[];
  usage: UsageQuote[];
}

/**
 * The renewal order at the end of [periodStart, periodEnd): the price of the next period (with the
 * subscription's discount while it lasts and the carried proration), plus one line per metered price
 * for the usage ingested up to `billedThrough` and not billed yet; the discount applies to the price
 * and the usage together, tax to the net. Lines: the price (unless the price itself is metered), the
 * usage lines, a proration line when one was carried in.
 */
export async function quoteCycle(
  tx: EntityManager,
  s: Subscription,
  period: { periodStart: Date; periodEnd: Date; billedThrough: Date | { settleMs: number }; final?: boolean },
): Promise<CycleQuote> {
  const usage = await quoteUsage(tx, s, period);
  const d = s.discount && (await discountAppliesToProduct(tx, s.discount, s.product.id)) ? s.discount : null;
  const q = cycleQuoteOf({
    final: period.final === true,
    price: s.price,
    productName: s.product.name,
    discount: d ? { terms: discountTerms(d), duration: discountDuration(d) } : null,
    startedAt: s.startedAt ?? s.createdAt,
    periodEnd: period.periodEnd,
    pendingProrationAmount: s.pendingProrationAmount,
    taxBasisPoints: await subscriptionTaxBasisPoints(tx, s),
    usage,
  });
  return { ...q, usage };
}

/** What quoteCycle prices, as values (the plain-SQL renewal, renewal-sql.ts, reads them in its own statement). */
export interface CycleInputs {
  /** The final order of an ending subscription bills the usage alone (no next period, no carried proration). */
  final: boolean;
  price: Pick<ProductPrice, 'id' | 'amountType' | 'priceAmount'>;
  productName: string;
  /** The subscription's discount when it applies to the product (else null). */
  discount: { terms: DiscountTerms; duration: DiscountDuration } | null;
  startedAt: Date;
  periodEnd: Date;
  pendingProrationAmount: number;
  taxBasisPoints: number;
  usage: { price: Pick<ProductPrice, 'id' | 'unitAmount' | 'capAmount'>; meter: Pick<Meter, 'id' | 'name'>; line: MeteredLine }[];
}

/** The cycle order's amounts and lines from its inputs (quoteCycle's arithmetic, no database). */
export function cycleQuoteOf(i: CycleInputs): { amounts: CycleAmounts; lines: OrderLine[] } {
  const final = i.final;
  const meteredAmount = i.usage.reduce((t, q) => t + q.line.amount, 0);
  const a = cycleAmounts({
    priceAmount: final ? 0 : priceAmountOf(i.price),
    discount: i.discount ? { terms: i.discount.terms, duration: i.discount.duration, appliedAt: i.startedAt } : null,
    periodStart: i.periodEnd,
    isFirstPeriod: false,
    proration: final ? 0 : i.pendingProrationAmount,
    taxBasisPoints: i.taxBasisPoints,
    meteredAmount,
  });
  const lines: OrderLine[] = [];
  const base = (l: Omit<OrderLine, 'id' | 'discountAmount' | 'taxAmount'>): OrderLine => ({ id: randomUUID(), discountAmount: 0, taxAmount: 0, ...l });
  if (!final && i.price.amountType !== 'metered_unit') {
    lines.push(base({ label: i.productName, amount: priceAmountOf(i.price), proration: false, productPriceId: i.price.id }));
  }
  for (const q of i.usage) {
    lines.push(
      base({
        label: `${q.meter.name} (${q.line.billableUnits} × ${normalizeDecimal(q.price.unitAmount!) ?? q.price.unitAmount}${q.line.capped ? `, capped at ${q.price.capAmount}` : ''})`,
        amount: q.line.amount,
        proration: false,
        productPriceId: q.price.id,
        meterId: q.meter.id,
        usage: q.line.usage,
        creditsUsed: q.line.creditsUsed,
        billableUnits: q.line.billableUnits,
        unitAmount: q.price.unitAmount ?? null,
        capAmount: q.price.capAmount ?? null,
      }),
    );
  }
  const discounted = lines.length;
  const prorationUsed = final ? 0 : i.pendingProrationAmount - a.carry;
  if (prorationUsed !== 0) lines.push(base({ label: 'Proration', amount: prorationUsed, proration: true, productPriceId: i.price.id }));
  const discounts = allocate(a.discount, lines.slice(0, discounted).map((l) => l.amount));
  discounts.forEach((v, k) => (lines[k]!.discountAmount = v));
  const taxes = allocate(a.tax, lines.map((l) => Math.max(l.amount - l.discountAmount, 0)));
  taxes.forEach((v, k) => (lines[k]!.taxAmount = v));
  return { amounts: a, lines };
}

export interface SubscriptionSchedule {
  status: SubscriptionStatus;
  ended: boolean;
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  graceDays: number;
}

/** Read once per period: only the columns it answers from (one statement, the organization joined). */
export async function subscriptionSchedule(em: EntityManager, id: string): Promise<SubscriptionSchedule | null> {
  const s = await em.findOne(
    Subscription,
    { id },
    { fields: ['status', 'endedAt', 'currentPeriodEnd', 'cancelAtPeriodEnd', 'organization.subscriptionSettings'] },
  );
  if (!s) return null;
  return {
    status: s.status,
    ended: isEnded(s) || !s.currentPeriodEnd,
    currentPeriodEnd: s.currentPeriodEnd?.toISOString() ?? null,
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    graceDays: subscriptionSettings(s.organization.subscriptionSettings).benefit_revocation_grace_period,
  };
}

export type RenewResult =
  /** `orderId`: the final usage order to charge (the workflow dunns it if the first charge is declined). */
  | { outcome: 'ended'; scope: BenefitScopeOut; orderId?: string }
  | {
      outcome: 'charge';
      orderId: string;
      total: number;
      scope: BenefitScopeOut;
      benefits: number;
      /** The period that follows (its end) and the status the renewal left: the workflow's next wait needs no schedule read. */
      periodEnd: string;
      status: SubscriptionStatus;
    }
  | { outcome: 'stale' };

/** Live benefits of the product (none: nothing to grant again for a new cycle), from its loaded `productBenefits.benefit`. */
function benefitCount(product: Product): number {
  return product.productBenefits.getItems().filter((pb) => pb.benefit.deletedAt == null).length;
}

/**
 * At `expectedPeriodEnd`: a subscription set to cancel ends (`canceled`, ended_at, subscription.revoked);
 * any other billable one rolls its period, drops an expired discount and gets its `subscription_cycle`
 * order (pending until charged; paid at once when it costs nothing). Idempotent: a retry after the
 * period rolled answers the cycle order it created.
 */
export async function renewSubscription(tx: EntityManager, id: string, expectedPeriodEnd: string, usage: UsageSettings = DEFAULT_USAGE_SETTINGS): Promise<RenewResult> {
  return (await renewPeriod(tx, id, expectedPeriodEnd, usage)).result;
}

/**
 * The usage-only order of a subscription ending at `end` before its period is over or as it ends:
 * the metered usage of `[current period start, end)` not billed yet (no next period, no carried
 * proration), recorded in `metered_billings` either way; null when there is nothing to charge. The
 * caller ends the subscription, emits `order.created` after its events, and charges the order once
 * (no dunning) after the transaction commits.
 */
export async function finalUsageOrder(tx: EntityManager, s: Subscription, end: Date, usage: UsageSettings): Promise<Order | null> {
  if (!meteredPrices(s).length) return null;
  const q = await quoteCycle(tx, s, { periodStart: s.currentPeriodStart, periodEnd: end, billedThrough: { settleMs: usage.settleMs }, final: true });
  const order =
    q.amounts.total > 0
      ? subscriptionOrder(tx, s, {
          product: s.product,
          productPrice: s.price,
          discount: q.amounts.discount > 0 ? s.discount : null,
          status: 'pending',
          billingReason: 'subscription_cycle',
          subtotalAmount: q.amounts.subtotal,
          discountAmount: q.amounts.discount,
          netAmount: q.amounts.net,
          taxAmount: q.amounts.tax,
          totalAmount: q.amounts.total,
          lines: q.lines,
        })
      : null;
  recordUsage(tx, s, q.usage, order?.id ?? null);
  return order;
}

/** renewSubscription, also answering the cycle order to charge (loaded in `tx` with its subscription, customer and product graph). */
export async function renewPeriod(tx: EntityManager, id: string, expectedPeriodEnd: string, usage: UsageSettings): Promise<{ result: RenewResult; order: Order | null }> {
  const stale = { result: { outcome: 'stale' as const }, order: null };
  const s = await lockSubscription(tx, id, { organization: false });
  if (!s || !s.currentPeriodEnd) return stale;
  if (s.currentPeriodStart.toISOString() === expectedPeriodEnd) {
    const o = await tx.findOne(Order, { subscription: s.id, billingReason: 'subscription_cycle' }, { orderBy: { createdAt: 'desc' } });
    return o && o.status === 'pending'
      ? {
          result: {
            outcome: 'charge',
            orderId: o.id,
            total: o.totalAmount,
            scope: scopeOf(s, o.id),
            benefits: benefitCount(s.product),
            periodEnd: s.currentPeriodEnd.toISOString(),
            status: s.status,
          },
          order: o,
        }
      : stale;
  }
  if (s.status === 'canceled' && s.cancelAtPeriodEnd && s.endedAt?.toISOString() === expectedPeriodEnd) {
    // A retry after the subscription ended here: answer its final usage order, if one is still to charge.
    const o = await tx.findOne(Order, { subscription: s.id, billingReason: 'subscription_cycle', status: 'pending' }, { orderBy: { createdAt: 'desc' } });
    const last = await tx.findOne(MeteredBilling, { subscription: s.id, periodEnd: s.endedAt }, { fields: ['order'] });
    const final = o && last?.order?.id === o.id ? o : null;
    return { result: { outcome: 'ended', scope: scopeOf(s), ...(final ? { orderId: final.id } : {}) }, order: final };
  }
  if (s.currentPeriodEnd.toISOString() !== expectedPeriodEnd || !isBillable(s)) return stale;
  const end = s.currentPeriodEnd;
  if (s.cancelAtPeriodEnd) {
    // The last period's metered usage is billed as it ends (a usage-only order; the workflow dunns a decline).
    const finalOrder = await finalUsageOrder(tx, s, end, usage);
    s.status = 'canceled';
    s.endedAt = end;
    s.endsAt = end;
    await emitSubscription(tx, s, ['subscription.updated', 'subscription.revoked'], true);
    if (finalOrder) await emitOrder(tx, finalOrder, ['order.created']);
    return { result: { outcome: 'ended', scope: scopeOf(s), ...(finalOrder ? { orderId: finalOrder.id } : {}) }, order: finalOrder };
  }
  const startedAt = s.startedAt ?? s.createdAt;
  // Billing is anchored on the day the subscription started, or its trial ended.
  const next = periodEnd(end, s.recurringInterval, (s.trialEnd ?? startedAt).getUTCDate());
  // Usage of the period that ends is billed with the next period's price (docs/billing.md), up to the
  // database's clock minus the settle time (read by the usage statement itself; none without metered prices).
  const { amounts: a, lines, usage: usageQuotes } = await quoteCycle(tx, s, { periodStart: s.currentPeriodStart, periodEnd: end, billedThrough: { settleMs: usage.settleMs } });
  s.currentPeriodStart = end;
  s.currentPeriodEnd = next;
  // A trial whose first period costs nothing converts at once (else its first charge converts it).
  const trialConverted = s.status === 'trialing' && a.total === 0;
  if (trialConverted) s.status = 'active';
  s.pendingProrationAmount = a.carry;
  if (!a.discountApplied) s.discount = null;
  s.amount = a.discount ? priceAmountOf(s.price) - a.discount : priceAmountOf(s.price);
  const order = subscriptionOrder(tx, s, {
    product: s.product,
    productPrice: s.price,
    discount: a.discountApplied ? s.discount : null,
    status: a.total === 0 ? 'paid' : 'pending',
    billingReason: 'subscription_cycle',
    subtotalAmount: a.subtotal,
    discountAmount: a.discount,
    netAmount: a.net,
    taxAmount: a.tax,
    totalAmount: a.total,
    lines: usageQuotes.length ? lines : null,
  });
  recordUsage(tx, s, usageQuotes, order.id);
  // One flush writes the period change and the order, one more their events (the read models show the stored timestamps).
  await tx.flush();
  await tx.populate(order, ORDER_POPULATE, { refresh: false });
  emitEvent(tx, s.organization.id, 'subscription.updated', serializeSubscription(s));
  if (trialConverted) emitEvent(tx, s.organization.id, 'subscription.active', serializeSubscription(s));
  const orderData = serializeOrder(order);
  for (const t of order.status === 'paid' ? (['order.created', 'order.paid'] as const) : (['order.created'] as const)) {
    emitEvent(tx, order.organization.id, t, orderData);
  }
  await tx.flush();
  return {
    result: { outcome: 'charge', orderId: order.id, total: a.total, scope: scopeOf(s, order.id), benefits: benefitCount(s.product), periodEnd: next.toISOString(), status: s.status },
    order,
  };
}
