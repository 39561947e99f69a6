/**
 * The seller's and customer's changes as the subscription's workflow applies them (its update
 * handlers, once their validators allowed them: workflows/src/subscriptions/rules.ts): cancel at
 * period end, uncancel, revoke now, move to another product. Each works inside the caller's
 * transaction: it locks the row, writes the change and its webhook events; a product change checks
 * the new product on the database (checkProductChange).
 */
import type { EntityManager } from '../../kit/db.ts';
import { ResourceUnavailable } from '../../kit/errors.ts';
import type { Order } from '../orders/entities.ts';
import { prorate, prorationFactor, taxOn } from '../pricing/index.ts';
import type { WebhookEventType } from '../webhooks/outbox.ts';
import type { Subscription, SubscriptionStatus } from './entities.ts';
import { DEFAULT_USAGE_SETTINGS, finalUsageOrder, type UsageSettings } from './renewal.ts';
import { AlreadyCanceledSubscription, checkProductChange, isBillable, subscriptionSettings, type CancellationReason, type ProrationBehavior } from './rules.ts';
import {
  discountAppliesToProduct,
  emitOrder,
  emitSubscription,
  lockSubscription,
  recurringAmount,
  scopeOf,
  subscriptionOrder,
  subscriptionTaxBasisPoints,
  type BenefitScopeOut,
} from './state.ts';

export interface CancelInput {
  reason?: CancellationReason | null;
  comment?: string | null;
}

export type ChangeResult = {
  subscriptionId: string;
  status: SubscriptionStatus;
  scope: BenefitScopeOut;
  previousProductId?: string;
  /** Revoke: the usage-only order of the unfinished period, to charge once after the commit. */
  finalOrderId?: string;
};

function setReason(s: Subscription, input: CancelInput) {
  if (input.reason !== undefined) s.customerCancellationReason = input.reason ?? null;
  if (input.comment !== undefined) s.customerCancellationComment = input.comment ?? null;
}

/** Cancel at period end: stays active with its benefits until then (subscription.updated, subscription.canceled). */
export async function applyCancel(tx: EntityManager, id: string, input: CancelInput, at: Date): Promise<ChangeResult> {
  const s = await lockSubscription(tx, id);
  if (!s) throw AlreadyCanceledSubscription();
  s.cancelAtPeriodEnd = true;
  s.canceledAt = at;
  s.endsAt = s.currentPeriodEnd ?? null;
  setReason(s, input);
  await emitSubscription(tx, s, ['subscription.updated', 'subscription.canceled'], true);
  return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
}

export async function applyUncancel(tx: EntityManager, id: string): Promise<ChangeResult> {
  const s = await lockSubscription(tx, id);
  if (!s) throw ResourceUnavailable('This subscription has ended.');
  s.cancelAtPeriodEnd = false;
  s.canceledAt = null;
  s.endsAt = null;
  s.customerCancellationReason = null;
  s.customerCancellationComment = null;
  await emitSubscription(tx, s, ['subscription.updated', 'subscription.uncanceled'], true);
  return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
}

/**
 * Revoke now: canceled, ended (subscription.updated, subscription.canceled, subscription.revoked). The
 * metered usage of the unfinished period up to `at` is billed by a usage-only order (`finalOrderId`,
 * order.created after the subscription's events), as when a subscription set to cancel ends.
 */
export async function applyRevoke(tx: EntityManager, id: string, input: CancelInput, at: Date, usage: UsageSettings = DEFAULT_USAGE_SETTINGS): Promise<ChangeResult> {
  const s = await lockSubscription(tx, id);
  if (!s) throw AlreadyCanceledSubscription('This subscription is already revoked.');
  const finalOrder = s.currentPeriodEnd && isBillable(s) ? await finalUsageOrder(tx, s, at, usage) : null;
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
  if (!finalOrder) return { subscriptionId: s.id, status: s.status, scope: scopeOf(s) };
  await emitOrder(tx, finalOrder, ['order.created']);
  return { subscriptionId: s.id, status: s.status, scope: scopeOf(s), finalOrderId: finalOrder.id };
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
  tx: EntityManager,
  id: string,
  input: ProductChangeInput,
  at: Date,
): Promise<ChangeResult & { orderId: string | null }> {
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
    order = subscriptionOrder(tx, s, {
      product,
      productPrice: price,
      discount: null,
      status: 'pending',
      billingReason: 'subscription_update',
      subtotalAmount: diff,
      discountAmount: 0,
      netAmount: diff,
      taxAmount: tax,
      totalAmount: diff + tax,
    });
  } else {
    s.pendingProrationAmount += diff;
  }
  await emitSubscription(tx, s, ['subscription.updated'], true);
  if (order) await emitOrder(tx, order, ['order.created']);
  return { subscriptionId: s.id, status: s.status, scope: scopeOf(s), previousProductId, orderId: order?.id ?? null };
}
