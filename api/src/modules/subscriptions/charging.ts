/**
 * Charging a subscription's orders off-session with the saved card, dunning's end (`unpaid`) and its
 * mail. The processor is never called inside a transaction: an order commits before it is charged
 * (its id keys the charge, so a retried activity never charges twice) and the outcome is written in
 * a transaction of its own, so these are the activities' bodies and take the EntityManager, not a
 * transaction; markUnpaid and dunningMail work inside the caller's.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { Order } from '../orders/entities.ts';
import { PaymentMethod } from '../payment-methods/entities.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { Subscription, type SubscriptionStatus } from './entities.ts';
import { renewAndChargeInSql } from './renewal-sql.ts';
import { renewPeriod, DEFAULT_USAGE_SETTINGS, type RenewResult, type UsageSettings } from './renewal.ts';
import { emitOrder, emitSubscription, lockSubscription, scopeOf, type BenefitScopeOut } from './state.ts';

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
  // The common case in plain SQL (renewal-sql.ts); null: not the common case, nothing written.
  const fast = await renewAndChargeInSql(em, processor, id, expectedPeriodEnd, usage, (orderId, subscriptionId, pmId, result) =>
    recordChargeOutcome(em, orderId, subscriptionId, pmId, result),
  );
  if (fast) return fast;
  const { result: r, order } = await em.transactional((tx) => renewPeriod(tx, id, expectedPeriodEnd, usage));
  if (r.outcome === 'ended' && order) {
    // The final usage order of a subscription that ended: its first charge (the workflow dunns a decline).
    const c = await chargeOrder(em, processor, order, 0);
    return { ...r, paid: c.paid, message: c.message };
  }
  if (r.outcome !== 'charge') return { ...r, paid: false, message: null };
  if (r.total === 0) return { ...r, paid: true, message: null };
  const c = await chargeOrder(em, processor, order!, 0);
  return { ...r, paid: c.paid, message: c.message, status: c.status ?? r.status };
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
  const { paid, message } = await chargeOrder(em, processor, o0, attempt);
  return { paid, message };
}

/** `o0`: the order as loaded in `em`, with its subscription and customer. `status`: the subscription's, when this wrote the outcome. */
async function chargeOrder(em: EntityManager, processor: PaymentProcessor, o0: Order, attempt: number): Promise<ChargeOutcome & { status?: SubscriptionStatus }> {
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
  const { status } = await recordChargeOutcome(em, orderId, sub0.id, pm?.id ?? null, result);
  if (result?.status === 'succeeded') return { paid: true, message: null, status };
  return { paid: false, message: result?.status === 'declined' ? result.message : 'No saved payment method.', status };
}

/**
 * The outcome of an order's charge, in a transaction of its own under the subscription's lock. Paid:
 * order `paid` (order.updated, order.paid), the card kept on the subscription, a past-due or trialing
 * subscription `active`. Declined (or no card): an active or trialing subscription becomes `past_due`.
 */
export async function recordChargeOutcome(
  em: EntityManager,
  orderId: string,
  subscriptionId: string,
  paymentMethodId: string | null,
  result: Awaited<ReturnType<PaymentProcessor['chargeOffSession']>> | null,
): Promise<{ status?: SubscriptionStatus }> {
  const paid = result?.status === 'succeeded';
  let status: SubscriptionStatus | undefined;
  await em.transactional(async (tx) => {
    // `refresh`: the rows as committed now, not as `em` last saw them.
    const s = await tx.findOne(Subscription, { id: subscriptionId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const o = await tx.findOneOrFail(Order, { id: orderId }, { refresh: true });
    if (!s) return;
    if (paid && o.status === 'pending') {
      o.status = 'paid';
      o.processorChargeId = result!.chargeId;
      if (paymentMethodId) s.paymentMethod = tx.getReference(PaymentMethod, paymentMethodId);
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
    status = s.status;
  });
  return { status };
}

/** Dunning exhausted: `unpaid`, ended now (subscription.revoked). Benefits go after the grace period. */
export async function markUnpaid(tx: EntityManager, id: string, at: Date): Promise<BenefitScopeOut | null> {
  const s = await lockSubscription(tx, id);
  if (!s) return null;
  if (s.status !== 'past_due') return scopeOf(s);
  s.status = 'unpaid';
  s.endedAt = at;
  s.endsAt = at;
  await emitSubscription(tx, s, ['subscription.updated', 'subscription.revoked'], true);
  return scopeOf(s);
}

/**
 * The dunning mail after a failed charge, with a link to the portal to update the card. For the final
 * usage order of a subscription that has ended, the mail says so (nothing is lost by paying late).
 */
export async function dunningMail(
  em: EntityManager,
  orderId: string,
  input: { attempt: number; nextRetryAt: string | null; portalUrl: string; reason: string | null },
) {
  const o = await em.findOne(Order, { id: orderId }, { populate: ['customer', 'product', 'organization', 'subscription'] });
  if (!o) return null;
  const money = `${o.currency.toUpperCase()} ${(o.totalAmount / 100).toFixed(2)}`;
  const link = `${input.portalUrl.replace(/\/$/, '')}/portal/${o.organization.slug}`;
  const ended = o.subscription?.endedAt != null;
  const lines = [
    ended
      ? `We could not charge your card ${money} for the usage of your ${o.product.name} subscription with ${o.organization.name}, which has ended.`
      : `We could not charge your card ${money} for your ${o.product.name} subscription with ${o.organization.name}.`,
    ...(input.reason ? [`The card was refused: ${input.reason}`] : []),
    '',
    input.nextRetryAt
      ? ended
        ? `We will try again on ${input.nextRetryAt.slice(0, 10)}. To settle it, update your card:`
        : `We will try again on ${input.nextRetryAt.slice(0, 10)}. To avoid losing access, update your card:`
      : ended
        ? `This was our last attempt: the order stays unpaid. To settle it, update your card and contact ${o.organization.name}:`
        : 'This was our last attempt: the subscription is now unpaid. To subscribe again, update your card:',
    link,
    '',
    `Order id: ${o.id}`,
  ];
  return {
    organizationId: o.organization.id,
    recipient: o.customer.email,
    subject: ended
      ? input.nextRetryAt
        ? `Payment failed for the final usage of your ${o.product.name} subscription`
        : `The final usage of your ${o.product.name} subscription is unpaid`
      : input.nextRetryAt
        ? `Payment failed for your ${o.product.name} subscription`
        : `Your ${o.product.name} subscription is unpaid`,
    text: `${lines.join('\n')}\n`,
  };
}
