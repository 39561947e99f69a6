/**
 * The steps of the `refund:<refund_id>` workflow, each idempotent: refund at the processor (keyed
 * `refund:<id>`, so a retry replays the first result), then settle the refund in one transaction
 * under the order's row lock: `succeeded` adds it to the order's refunded amounts and moves the
 * order to `partially_refunded` or `refunded` (refund.updated, order.refunded, order.updated), while
 * `failed` releases the reservation (refund.updated). Settling an already settled refund does nothing.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { Order } from '../orders/entities.ts';
import { ORDER_POPULATE, serializeOrder } from '../orders/schemas.ts';
import { ProcessorError, type PaymentProcessor } from '../payments/processor.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Refund, type RefundStatus } from './entities.ts';
import { serializeRefund } from './schemas.ts';

export type ProcessorRefundResult =
  | { status: 'succeeded'; processorRefundId: string | null }
  | { status: 'failed'; reason: string }
  /** Already settled earlier (a replay): nothing to do. */
  | { status: 'settled' };

/** Step 1: the money back at the processor (net + tax of the refund). */
export async function refundAtProcessor(em: EntityManager, processor: PaymentProcessor, refundId: string): Promise<ProcessorRefundResult> {
  const refund = await em.findOne(Refund, { id: refundId }, { populate: ['order'] });
  if (!refund) return { status: 'settled' };
  if (refund.status !== 'pending') return { status: 'settled' };
  const chargeId = refund.order.processorChargeId;
  const total = refund.amount + refund.taxAmount;
  // Nothing was charged at a processor (a free or manually settled order): only our books change.
  if (!chargeId || total === 0) return { status: 'succeeded', processorRefundId: null };
  try {
    const r = await processor.refund({ chargeId, amount: total, idempotencyKey: `refund:${refundId}` });
    return { status: 'succeeded', processorRefundId: r.refundId };
  } catch (err) {
    if (err instanceof ProcessorError) return { status: 'failed', reason: err.message };
    throw err;
  }
}

export interface SettledRefund {
  status: RefundStatus;
  /** What to revoke when the refund asked for it (one-time orders only). */
  revoke: { customerId: string; productId: string; subscriptionId: string | null; orderId: string | null } | null;
}

/** Step 2: the refund's outcome written with the order's refunded amounts and status. */
export async function settleRefund(em: EntityManager, refundId: string, result: ProcessorRefundResult): Promise<SettledRefund | null> {
  return em.transactional(async (tx) => {
    const r0 = await tx.findOne(Refund, { id: refundId });
    if (!r0) return null;
    const order = await tx.findOneOrFail(Order, { id: r0.order.id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const refund = await tx.findOneOrFail(Refund, { id: refundId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    const revoke =
      refund.revokeBenefits && !refund.subscription
        ? { customerId: refund.customer.id, productId: order.product.id, subscriptionId: null, orderId: order.id }
        : null;
    if (refund.status !== 'pending' || result.status === 'settled') {
      return { status: refund.status, revoke: refund.status === 'succeeded' ? revoke : null };
    }
    const orgId = refund.organization.id;
    if (result.status === 'failed') {
      refund.status = 'failed';
      refund.failureReason = result.reason;
      await tx.flush();
      emitEvent(tx, orgId, 'refund.updated', serializeRefund(refund));
      await tx.flush();
      return { status: 'failed', revoke: null };
    }
    refund.status = 'succeeded';
    refund.processorRefundId = result.processorRefundId;
    order.refundedAmount += refund.amount;
    order.refundedTaxAmount += refund.taxAmount;
    order.status = order.refundedAmount >= order.netAmount ? 'refunded' : 'partially_refunded';
    await tx.flush();
    emitEvent(tx, orgId, 'refund.updated', serializeRefund(refund));
    await tx.populate(order, ORDER_POPULATE);
    const data = serializeOrder(order);
    emitEvent(tx, orgId, 'order.refunded', data);
    emitEvent(tx, orgId, 'order.updated', data);
    await tx.flush();
    return { status: 'succeeded', revoke };
  });
}
