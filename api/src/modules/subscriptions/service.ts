/**
 * Subscription rules and state changes. Two kinds of callers:
 * - the API validates a seller's or customer's request against the database (`check*`: the Polar
 *   error shapes) and then hands the change to the subscription's workflow as an update;
 * - the `subscription:<id>` workflow's activities apply every state change (`apply*`, `renew*`,
 *   `charge*`, `markUnpaid`), each in its own transaction under the subscription's row lock, re-checking
 *   the rules, and emit the webhook events in the same transaction.
 * So the workflow is the single writer of subscription state after creation; the API never writes it.
 * Amounts come from the pricing module (`cycleAmounts`, `prorate`).
 */
import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, BadRequest, fieldError, ResourceUnavailable } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { emitCustomerStateChanged } from '../customers/service.ts';
import type { Discount } from '../discounts/entities.ts';
import { Order, type OrderLine } from '../orders/entities.ts';
import { ORDER_POPULATE, serializeOrder } from '../orders/schemas.ts';
import { PaymentMethod } from '../payment-methods/entities.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { allocate, cycleAmounts, periodEnd, prorate, prorationFactor, taxOn, type CycleAmounts } from '../pricing/index.ts';
import { MeteredBilling } from '../usage/entities.ts';
import { databaseNow, meteredPrices, quoteUsage, recordUsage, type UsageQuote } from '../usage/service.ts';
import { Product, type ProductPrice } from '../products/entities.ts';
import { discountDuration, discountTerms, taxBasisPoints } from '../pricing/terms.ts';
import { emitEvent, type WebhookEventType } from '../webhooks/outbox.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, CANCELLATION_REASONS, Subscription, type SubscriptionStatus } from './entities.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription } from './schemas.ts';

export const AlreadyCanceledSubscription = (detail = 'This subscription is already canceled or will be at the end of the period.') =>
  new ApiError(403, 'AlreadyCanceledSubscription', detail);

export type CancellationReason = (typeof CANCELLATION_REASONS)[number];
export type ProrationBehavior = 'invoice' | 'prorate';

/** Statuses still billed (and renewed). */
export const BILLABLE_STATUSES: SubscriptionStatus[] = [...ACTIVE_SUBSCRIPTION_STATUSES, 'past_due'];

export interface SubscriptionSettings {
  allow_multiple_subscriptions: boolean;
  allow_customer_updates: boolean;
  proration_behavior: ProrationBehavior;
  /** Days an `unpaid` subscription keeps its benefits (Polar's `benefit_revocation_grace_period`). */
  benefit_revocation_grace_period: number;
}

export function subscriptionSettings(raw: Record<string, unknown> | null | undefined): SubscriptionSettings {
  const s = raw ?? {};
  return {
    allow_multiple_subscriptions: s.allow_multiple_subscriptions === true,
    allow_customer_updates: s.allow_customer_updates !== false,
    proration_behavior: s.proration_behavior === 'invoice' ? 'invoice' : 'prorate',
    benefit_revocation_grace_period:
      typeof s.benefit_revocation_grace_period === 'number' && s.benefit_revocation_grace_period > 0 ? s.benefit_revocation_grace_period : 0,
  };
}

const ENDED_STATUSES: SubscriptionStatus[] = ['canceled', 'unpaid', 'incomplete_expired'];
const isEnded = (s: Pick<Subscription, 'endedAt' | 'status'>) => s.endedAt != null || ENDED_STATUSES.includes(s.status);
const isBillable = (s: Subscription) => BILLABLE_STATUSES.includes(s.status) && !isEnded(s);

// ---------------------------------------------------------------------------------------------
// Checks (API and activities)

export function checkCancel(s: Subscription): void {
  if (!isBillable(s) || s.cancelAtPeriodEnd) throw AlreadyCanceledSubscription();
}

export function checkUncancel(s: Subscription): void {
  if (isEnded(s)) throw ResourceUnavailable('This subscription has ended.');
  if (!s.cancelAtPeriodEnd) throw BadRequest('This subscription is not set to cancel at the end of the period.');
}

export function checkRevoke(s: Subscription): void {
  if (isEnded(s)) throw AlreadyCanceledSubscription('This subscription is already revoked.');
}

/** The product change: not on ended or canceling subscriptions; the new product must be a plain recurring one of the organization. */
export async function checkProductChange(em: EntityManager, s: Subscription, productId: string): Promise<{ product: Product; price: ProductPrice }> {
  if (isEnded(s) || s.cancelAtPeriodEnd) throw AlreadyCanceledSubscription();
  const loc = ['body', 'product_id'];
  const product = await em.findOne(Product, { id: productId, organization: s.organization.id }, { populate: ['prices'] });
  if (!product) throw fieldError(loc, 'Product does not exist.', 'value_error', productId);
  if (product.isArchived) throw fieldError(loc, 'Product is archived.', 'value_error', productId);
  if (!product.recurringInterval) throw fieldError(loc, 'Product is not recurring.', 'value_error', productId);
  const prices = product.prices.getItems().filter((p) => !p.isArchived);
  if (prices.some((p) => p.amountType === 'custom')) throw fieldError(loc, 'Pay-what-you-want products are not supported.', 'value_error', productId);
  const price = prices.find((p) => p.amountType === 'fixed') ?? prices.find((p) => p.amountType === 'free');
  if (!price) throw fieldError(loc, 'Product has no price to subscribe to.', 'value_error', productId);
  if (product.id === s.product.id && price.id === s.price.id) throw fieldError(loc, 'The subscription is already on this product.', 'value_error', productId);
  return { product, price };
}

// ---------------------------------------------------------------------------------------------
// Helpers

/**
 * The subscription under its row lock, with what its webhook payloads read (SUBSCRIPTION_POPULATE, and
 * the organization unless `organization: false`): the row and its to-one relations in one statement
 * that locks only the subscription's row (`FOR UPDATE OF` its alias: never the product or customer rows
 * that other subscriptions share), then the product's collections, one statement each.
 */
async function lockSubscription(tx: EntityManager, id: string, opts: { organization?: boolean } = {}): Promise<Subscription | null> {
  const s = await tx.findOne(
    Subscription,
    { id },
    {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      lockTableAliases: [SUBSCRIPTION_ALIAS],
      populate: opts.organization === false ? ['customer', 'price', 'discount', 'product'] : ['customer', 'price', 'discount', 'product', 'organization'],
    },
  );
  if (s) await tx.populate(s, SUBSCRIPTION_POPULATE, { refresh: false });
  return s;
}

/** The alias MikroORM gives the root table of a `Subscription` query (the default naming strategy's `s0`). */
const SUBSCRIPTION_ALIAS = 's0';

async function emitSubscription(tx: EntityManager, s: Subscription, types: WebhookEventType[], stateChanged: boolean): Promise<void> {
  await tx.flush();
  await tx.populate(s, SUBSCRIPTION_POPULATE, { refresh: false });
  const data = serializeSubscription(s);
  for (const t of types) emitEvent(tx, s.organization.id, t, data);
  if (stateChanged) {
    const customer = await tx.findOneOrFail(Customer, { id: s.customer.id });
    await emitCustomerStateChanged(tx, s.organization.id, customer);
  }
  await tx.flush();
}

async function emitOrder(tx: EntityManager, o: Order, types: WebhookEventType[]): Promise<void> {
  await tx.flush();
  // What the transaction already loaded (the renewal's subscription graph) is not read again.
  await tx.populate(o, ORDER_POPULATE, { refresh: false });
  const data = serializeOrder(o);
  for (const t of types) emitEvent(tx, o.organization.id, t, data);
  await tx.flush();
}

async function discountAppliesToProduct(em: EntityManager, d: Discount, productId: string): Promise<boolean> {
  if (d.deletedAt) return false;
  await em.populate(d, ['products']);
  const products = d.products.getItems();
  return !products.length || products.some((p) => p.id === productId);
}

/** The tax rate of the subscription's billing country. */
const subscriptionTaxBasisPoints = (em: EntityManager, s: Subscription) => taxBasisPoints(em, s.organization.id, s.customer.billingAddress?.country);

const priceAmountOf = (price: ProductPrice) => (price.amountType === 'fixed' ? (price.priceAmount ?? 0) : 0);

/** What the customer pays per period for `price` with the subscription's discount, if it still applies now. */
async function recurringAmount(em: EntityManager, s: Subscription, price: ProductPrice, productId: string, periodStart: Date): Promise<number> {
  const d = s.discount && (await discountAppliesToProduct(em, s.discount, productId)) ? s.discount : null;
  return cycleAmounts({
    priceAmount: priceAmountOf(price),
    discount: d ? { terms: discountTerms(d), duration: discountDuration(d), appliedAt: s.startedAt ?? s.createdAt } : null,
    periodStart,
    isFirstPeriod: (s.startedAt ?? s.createdAt).getTime() === periodStart.getTime(),
    proration: 0,
  }).net;
}

export interface BenefitScopeOut {
  customerId: string;
  productId: string;
  subscriptionId: string | null;
  orderId: string | null;
}

const scopeOf = (s: Subscription, orderId: string | null = null, productId = s.product.id): BenefitScopeOut => ({
  customerId: s.customer.id,
  productId,
  subscriptionId: s.id,
  orderId,
});

// ---------------------------------------------------------------------------------------------
// A renewal's order: the price for the next period plus the metered usage of the period that ends

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
  period: { periodStart: Date; periodEnd: Date; billedThrough: Date; final?: boolean },
): Promise<CycleQuote> {
  const startedAt = s.startedAt ?? s.createdAt;
  const usageQuotes = await quoteUsage(tx, s, period);
  // The final order of an ending subscription bills the usage alone (no next period, no carried proration).
  const final = period.final === true;
  const meteredAmount = usageQuotes.reduce((t, q) => t + q.line.amount, 0);
  const d = s.discount && (await discountAppliesToProduct(tx, s.discount, s.product.id)) ? s.discount : null;
  const a = cycleAmounts({
    priceAmount: final ? 0 : priceAmountOf(s.price),
    discount: d ? { terms: discountTerms(d), duration: discountDuration(d), appliedAt: startedAt } : null,
    periodStart: period.periodEnd,
    isFirstPeriod: false,
    proration: final ? 0 : s.pendingProrationAmount,
    taxBasisPoints: await subscriptionTaxBasisPoints(tx, s),
    meteredAmount,
  });
  const lines: OrderLine[] = [];
  const base = (l: Omit<OrderLine, 'id' | 'discountAmount' | 'taxAmount'>): OrderLine => ({ id: randomUUID(), discountAmount: 0, taxAmount: 0, ...l });
  if (!final && s.price.amountType !== 'metered_unit') {
    lines.push(base({ label: s.product.name, amount: priceAmountOf(s.price), proration: false, productPriceId: s.price.id }));
  }
  for (const q of usageQuotes) {
    lines.push(
      base({
        label: `${q.meter.name} (${q.line.billableUnits} × ${q.price.unitAmount}${q.line.capped ? `, capped at ${q.price.capAmount}` : ''})`,
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
  const prorationUsed = final ? 0 : s.pendingProrationAmount - a.carry;
  if (prorationUsed !== 0) lines.push(base({ label: 'Proration', amount: prorationUsed, proration: true, productPriceId: s.price.id }));
  const discounts = allocate(a.discount, lines.slice(0, discounted).map((l) => l.amount));
  discounts.forEach((v, i) => (lines[i]!.discountAmount = v));
  const taxes = allocate(a.tax, lines.map((l) => Math.max(l.amount - l.discountAmount, 0)));
  taxes.forEach((v, i) => (lines[i]!.taxAmount = v));
  return { amounts: a, lines, usage: usageQuotes };
}

// ---------------------------------------------------------------------------------------------
// The workflow's reads

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

// ---------------------------------------------------------------------------------------------
// Period end: end or renew

export type RenewResult =
  | { outcome: 'ended'; scope: BenefitScopeOut }
  | { outcome: 'charge'; orderId: string; total: number; scope: BenefitScopeOut; benefits: number }
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
export async function renewSubscription(em: EntityManager, id: string, expectedPeriodEnd: string, usage: UsageSettings = DEFAULT_USAGE_SETTINGS): Promise<RenewResult> {
  return (await renew(em, id, expectedPeriodEnd, usage)).result;
}

/** renewSubscription, also answering the cycle order to charge (loaded in `em` with its subscription, customer and product graph). */
async function renew(em: EntityManager, id: string, expectedPeriodEnd: string, usage: UsageSettings): Promise<{ result: RenewResult; order: Order | null }> {
  const stale = { result: { outcome: 'stale' as const }, order: null };
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id, { organization: false });
    if (!s || !s.currentPeriodEnd) return stale;
    if (s.currentPeriodStart.toISOString() === expectedPeriodEnd) {
      const o = await tx.findOne(Order, { subscription: s.id, billingReason: 'subscription_cycle' }, { orderBy: { createdAt: 'desc' } });
      return o && o.status === 'pending'
        ? { result: { outcome: 'charge', orderId: o.id, total: o.totalAmount, scope: scopeOf(s, o.id), benefits: benefitCount(s.product) }, order: o }
        : stale;
    }
    if (s.status === 'canceled' && s.cancelAtPeriodEnd && s.endedAt?.toISOString() === expectedPeriodEnd) {
      // A retry after the subscription ended here: answer its final usage order, if one is still to charge.
      const o = await tx.findOne(Order, { subscription: s.id, billingReason: 'subscription_cycle', status: 'pending' }, { orderBy: { createdAt: 'desc' } });
      const last = await tx.findOne(MeteredBilling, { subscription: s.id, periodEnd: s.endedAt }, { fields: ['order'] });
      return { result: { outcome: 'ended', scope: scopeOf(s) }, order: o && last?.order?.id === o.id ? o : null };
    }
    if (s.currentPeriodEnd.toISOString() !== expectedPeriodEnd || !isBillable(s)) return stale;
    const end = s.currentPeriodEnd;
    if (s.cancelAtPeriodEnd) {
      // The last period's metered usage is billed as it ends (a usage-only order, charged once, no dunning).
      let finalOrder: Order | null = null;
      if (meteredPrices(s).length) {
        const billedThrough = new Date((await databaseNow(tx)).getTime() - usage.settleMs);
        const q = await quoteCycle(tx, s, { periodStart: s.currentPeriodStart, periodEnd: end, billedThrough, final: true });
        if (q.amounts.total > 0) {
          finalOrder = tx.create(Order, {
            organization: s.organization,
            customer: s.customer,
            product: s.product,
            productPrice: s.price,
            discount: q.amounts.discount > 0 ? s.discount : null,
            subscription: s,
            checkout: null,
            status: 'pending',
            billingReason: 'subscription_cycle',
            subtotalAmount: q.amounts.subtotal,
            discountAmount: q.amounts.discount,
            netAmount: q.amounts.net,
            taxAmount: q.amounts.tax,
            totalAmount: q.amounts.total,
            refundedAmount: 0,
            refundedTaxAmount: 0,
            currency: s.currency,
            billingAddress: s.customer.billingAddress ?? null,
            customFieldData: {},
            metadata: {},
            processorChargeId: null,
            lines: q.lines,
          });
        }
        recordUsage(tx, s, q.usage, finalOrder?.id ?? null);
      }
      s.status = 'canceled';
      s.endedAt = end;
      s.endsAt = end;
      await emitSubscription(tx, s, ['subscription.updated', 'subscription.revoked'], true);
      if (finalOrder) await emitOrder(tx, finalOrder, ['order.created']);
      return { result: { outcome: 'ended', scope: scopeOf(s) }, order: finalOrder };
    }
    const startedAt = s.startedAt ?? s.createdAt;
    // Billing is anchored on the day the subscription started, or its trial ended.
    const next = periodEnd(end, s.recurringInterval, (s.trialEnd ?? startedAt).getUTCDate());
    // Usage of the period that ends is billed with the next period's price (docs/billing.md).
    const billedThrough = new Date((await databaseNow(tx)).getTime() - usage.settleMs);
    const { amounts: a, lines, usage: usageQuotes } = await quoteCycle(tx, s, { periodStart: s.currentPeriodStart, periodEnd: end, billedThrough });
    s.currentPeriodStart = end;
    s.currentPeriodEnd = next;
    // A trial whose first period costs nothing converts at once (else its first charge converts it).
    const trialConverted = s.status === 'trialing' && a.total === 0;
    if (trialConverted) s.status = 'active';
    s.pendingProrationAmount = a.carry;
    if (!a.discountApplied) s.discount = null;
    s.amount = a.discount ? priceAmountOf(s.price) - a.discount : priceAmountOf(s.price);
    const order = tx.create(Order, {
      organization: s.organization,
      customer: s.customer,
      product: s.product,
      productPrice: s.price,
      discount: a.discountApplied ? s.discount : null,
      subscription: s,
      checkout: null,
      status: a.total === 0 ? 'paid' : 'pending',
      billingReason: 'subscription_cycle',
      subtotalAmount: a.subtotal,
      discountAmount: a.discount,
      netAmount: a.net,
      taxAmount: a.tax,
      totalAmount: a.total,
      refundedAmount: 0,
      refundedTaxAmount: 0,
      currency: s.currency,
      billingAddress: s.customer.billingAddress ?? null,
      customFieldData: {},
      metadata: {},
      processorChargeId: null,
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
    return { result: { outcome: 'charge', orderId: order.id, total: a.total, scope: scopeOf(s, order.id), benefits: benefitCount(s.product) }, order };
  });
}

export type RenewAndChargeResult = RenewResult & ChargeOutcome;

/**
 * The common path of a renewal: renewSubscription, then the first charge of its cycle order, on one
 * EntityManager: the charge reuses the order, subscription, customer and product graph the renewal
 * loaded instead of reading them again. Still two transactions around the charge: the order commits
 * before it is charged (its id keys the charge, so a retry never charges twice), and is paid after.
 */
export async function renewAndChargeSubscription(
  em: EntityManager,
  processor: PaymentProcessor,
  id: string,
  expectedPeriodEnd: string,
  usage: UsageSettings = DEFAULT_USAGE_SETTINGS,
): Promise<RenewAndChargeResult> {
  const { result: r, order } = await renew(em, id, expectedPeriodEnd, usage);
  if (r.outcome === 'ended' && order) {
    // The final usage order of a subscription that ended: one charge; a decline leaves it pending.
    const c = await chargeOrder(em, processor, order, 0);
    return { ...r, paid: c.paid, message: c.message };
  }
  if (r.outcome !== 'charge') return { ...r, paid: false, message: null };
  if (r.total === 0) return { ...r, paid: true, message: null };
  const c = await chargeOrder(em, processor, order!, 0);
  return { ...r, paid: c.paid, message: c.message };
}

/** The card to charge: the customer's current default (they may have replaced it), else the subscription's. */
async function chargeableMethod(em: EntityManager, s: Subscription, processor: string): Promise<PaymentMethod | null> {
  const def = await em.findOne(PaymentMethod, { customer: s.customer.id, isDefault: true, deletedAt: null, processor });
  if (def) return def;
  const pm = s.paymentMethod ? await em.findOne(PaymentMethod, { id: s.paymentMethod.id, deletedAt: null }) : null;
  return pm;
}

export interface ChargeOutcome {
  paid: boolean;
  message: string | null;
}

/**
 * Charges a pending subscription order off-session with the saved card (`attempt` keys the charge, so
 * a retried activity never charges twice). Paid: order `paid` (order.updated, order.paid) and a
 * past-due subscription back to `active`. Declined: the subscription becomes `past_due`.
 *
 * Reads through `em` (see renewAndChargeSubscription): what it already holds is not read again, but
 * the subscription and order rows are re-read under the subscription's lock before they change.
 */
export async function chargeSubscriptionOrder(em: EntityManager, processor: PaymentProcessor, orderId: string, attempt: number): Promise<ChargeOutcome> {
  const o0 = await em.findOne(Order, { id: orderId }, { populate: ['subscription', 'customer'] });
  if (!o0 || !o0.subscription) return { paid: false, message: 'Order not found' };
  return chargeOrder(em, processor, o0, attempt);
}

/** `o0`: the order as loaded in `em`, with its subscription and customer. */
async function chargeOrder(em: EntityManager, processor: PaymentProcessor, o0: Order, attempt: number): Promise<ChargeOutcome> {
  if (o0.status === 'paid') return { paid: true, message: null };
  const orderId = o0.id;
  const sub0 = o0.subscription!;
  const pm = await chargeableMethod(em, sub0, processor.name);
  let result: Awaited<ReturnType<PaymentProcessor['chargeOffSession']>> | null = null;
  if (pm && o0.customer.processorCustomerId) {
    result = await processor.chargeOffSession({
      amount: o0.totalAmount,
      currency: o0.currency,
      paymentMethodId: pm.processorId,
      processorCustomerId: o0.customer.processorCustomerId,
      idempotencyKey: `order:${orderId}:charge:${attempt}`,
      metadata: { order_id: orderId, subscription_id: sub0.id },
    });
  }
  const paid = result?.status === 'succeeded';
  await em.transactional(async (tx) => {
    // `refresh`: the rows as committed now, not as `em` last saw them.
    const s = await tx.findOne(Subscription, { id: sub0.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const o = await tx.findOneOrFail(Order, { id: orderId }, { refresh: true });
    if (!s) return;
    if (paid && o.status === 'pending') {
      o.status = 'paid';
      o.processorChargeId = result!.chargeId;
      if (pm) s.paymentMethod = tx.getReference(PaymentMethod, pm.id);
      await emitOrder(tx, o, ['order.updated', 'order.paid']);
      // Paid: back from past_due, or a trial converted by its first charge.
      if (s.status === 'past_due' || s.status === 'trialing') {
        s.status = 'active';
        await emitSubscription(tx, s, ['subscription.updated', 'subscription.active'], true);
      }
    } else if (!paid && (s.status === 'active' || s.status === 'trialing')) {
      s.status = 'past_due';
      await emitSubscription(tx, s, ['subscription.updated'], true);
    }
  });
  if (paid) return { paid: true, message: null };
  return { paid: false, message: result?.status === 'declined' ? result.message : 'No saved payment method.' };
}

/** Dunning exhausted: `unpaid`, ended now (subscription.revoked). Benefits go after the grace period. */
export async function markUnpaid(em: EntityManager, id: string, at: Date): Promise<BenefitScopeOut | null> {
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id);
    if (!s) return null;
    if (s.status !== 'past_due') return scopeOf(s);
    s.status = 'unpaid';
    s.endedAt = at;
    s.endsAt = at;
    await emitSubscription(tx, s, ['subscription.updated', 'subscription.revoked'], true);
    return scopeOf(s);
  });
}

/** The dunning mail after a failed charge, with a link to the portal to update the card. */
export async function dunningMail(
  em: EntityManager,
  orderId: string,
  input: { attempt: number; nextRetryAt: string | null; portalUrl: string; reason: string | null },
) {
  const o = await em.findOne(Order, { id: orderId }, { populate: ['customer', 'product', 'organization'] });
  if (!o) return null;
  const money = `${o.currency.toUpperCase()} ${(o.totalAmount / 100).toFixed(2)}`;
  const link = `${input.portalUrl.replace(/\/$/, '')}/portal/${o.organization.slug}`;
  const lines = [
    `We could not charge your card ${money} for your ${o.product.name} subscription with ${o.organization.name}.`,
    ...(input.reason ? [`The card was refused: ${input.reason}`] : []),
    '',
    input.nextRetryAt
      ? `We will try again on ${input.nextRetryAt.slice(0, 10)}. To avoid losing access, update your card:`
      : 'This was our last attempt: the subscription is now unpaid. To subscribe again, update your card:',
    link,
    '',
    `Order id: ${o.id}`,
  ];
  return {
    organizationId: o.organization.id,
    recipient: o.customer.email,
    subject: input.nextRetryAt
      ? `Payment failed for your ${o.product.name} subscription`
      : `Your ${o.product.name} subscription is unpaid`,
    text: `${lines.join('\n')}\n`,
  };
}

// ---------------------------------------------------------------------------------------------
// Seller and customer actions (applied by the workflow's update handlers)

export interface CancelInput {
  reason?: CancellationReason | null;
  comment?: string | null;
}

export type ChangeResult = { subscriptionId: string; status: SubscriptionStatus; scope: BenefitScopeOut; previousProductId?: string };

function setReason(s: Subscription, input: CancelInput) {
  if (input.reason !== undefined) s.customerCancellationReason = input.reason ?? null;
  if (input.comment !== undefined) s.customerCancellationComment = input.comment ?? null;
}

/** Cancel at period end: stays active with its benefits until then (subscription.updated, subscription.canceled). */
export async function applyCancel(em: EntityManager, id: string, input: CancelInput, at: Date): Promise<ChangeResult> {
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id);
    if (!s) throw AlreadyCanceledSubscription();
    checkCancel(s);
    s.cancelAtPeriodEnd = true;
    s.canceledAt = at;
    s.endsAt = s.currentPeriodEnd ?? null;
    setReason(s, input);
    await emitSubscription(tx, s, ['subscription.updated', 'subscription.canceled'], true);
    return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
  });
}

export async function applyUncancel(em: EntityManager, id: string): Promise<ChangeResult> {
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id);
    if (!s) throw ResourceUnavailable('This subscription has ended.');
    checkUncancel(s);
    s.cancelAtPeriodEnd = false;
    s.canceledAt = null;
    s.endsAt = null;
    s.customerCancellationReason = null;
    s.customerCancellationComment = null;
    await emitSubscription(tx, s, ['subscription.updated', 'subscription.uncanceled'], true);
    return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
  });
}

/** Revoke now: canceled, ended (subscription.updated, subscription.canceled, subscription.revoked). */
export async function applyRevoke(em: EntityManager, id: string, input: CancelInput, at: Date): Promise<ChangeResult> {
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id);
    if (!s) throw AlreadyCanceledSubscription('This subscription is already revoked.');
    checkRevoke(s);
    const wasCanceling = s.cancelAtPeriodEnd;
    s.status = 'canceled';
    s.cancelAtPeriodEnd = false;
    s.canceledAt ??= at;
    s.endsAt = at;
    s.endedAt = at;
    setReason(s, input);
    const types: WebhookEventType[] = wasCanceling
      ? ['subscription.updated', 'subscription.revoked']
      : ['subscription.updated', 'subscription.canceled', 'subscription.revoked'];
    await emitSubscription(tx, s, types, true);
    return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
  });
}

export interface ProductChangeInput {
  productId: string;
  prorationBehavior: ProrationBehavior | null;
}

/**
 * What moving `s` to the product at `at` bills, without changing anything: the new per-period amount,
 * the proration (credit for the old price, debit for the new, net), the behaviour, and the tax when
 * the net is billed now (`invoice`). applyProductChange applies exactly this; the portal previews it.
 */
export async function quoteProductChange(em: EntityManager, s: Subscription, input: ProductChangeInput, at: Date) {
  const { product, price } = await checkProductChange(em, s, input.productId);
  const behavior = input.prorationBehavior ?? subscriptionSettings(s.organization.subscriptionSettings).proration_behavior;
  const newAmount = await recurringAmount(em, s, price, product.id, s.currentPeriodStart);
  const proration = s.currentPeriodEnd ? prorate(s.amount, newAmount, prorationFactor(at, s.currentPeriodStart, s.currentPeriodEnd)) : { credit: 0, debit: 0, net: 0 };
  const billedNow = behavior === 'invoice' && proration.net > 0;
  const tax = billedNow ? taxOn(proration.net, await subscriptionTaxBasisPoints(em, s)) : 0;
  return { product, price, behavior, newAmount, ...proration, billedNow, tax };
}

/**
 * Moves the subscription to another product's price for the rest of the period. Proration factor =
 * seconds left / seconds in the period; credit the old amount, debit the new one. `invoice`: a
 * positive difference is billed now with a `subscription_update` order (answered as `orderId` for the
 * workflow to charge); `prorate` (or a credit): carried to the next cycle's order.
 */
export async function applyProductChange(
  em: EntityManager,
  id: string,
  input: ProductChangeInput,
  at: Date,
): Promise<ChangeResult & { orderId: string | null }> {
  return em.transactional(async (tx) => {
    const s = await lockSubscription(tx, id);
    if (!s) throw AlreadyCanceledSubscription();
    const { product, price, newAmount, net: diff, billedNow, tax } = await quoteProductChange(tx, s, input, at);
    const previousProductId = s.product.id;
    if (s.discount && !(await discountAppliesToProduct(tx, s.discount, product.id))) s.discount = null;
    s.product = product;
    s.price = price;
    s.amount = newAmount;
    s.recurringInterval = product.recurringInterval!;
    let order: Order | null = null;
    if (billedNow) {
      order = tx.create(Order, {
        organization: s.organization,
        customer: s.customer,
        product,
        productPrice: price,
        discount: null,
        subscription: s,
        checkout: null,
        status: 'pending',
        billingReason: 'subscription_update',
        subtotalAmount: diff,
        discountAmount: 0,
        netAmount: diff,
        taxAmount: tax,
        totalAmount: diff + tax,
        refundedAmount: 0,
        refundedTaxAmount: 0,
        currency: s.currency,
        billingAddress: s.customer.billingAddress ?? null,
        customFieldData: {},
        metadata: {},
        processorChargeId: null,
      });
    } else {
      s.pendingProrationAmount += diff;
    }
    await emitSubscription(tx, s, ['subscription.updated'], true);
    if (order) await emitOrder(tx, order, ['order.created']);
    return { subscriptionId: s.id, status: s.status, scope: scopeOf(s), previousProductId, orderId: order?.id ?? null };
  });
}
