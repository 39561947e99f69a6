/** Undoing a confirmed checkout whose fulfilment failed for good: refund, release, reopen. */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { Checkout } from '../checkouts/entities.ts';
import { serializeCheckout } from '../checkouts/schemas.ts';
import { CHECKOUT_POPULATE } from '../checkouts/schemas.ts';
import { refundUnfulfilledCharge } from '../checkouts/charge-attempts.ts';
import { releaseRedemption } from '../checkouts/redemptions.ts';
import type { PaymentProcessor } from '../payments/processor.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Order } from './entities.ts';
import { ORDER_POPULATE, serializeOrder } from './schemas.ts';

/**
 * Compensation after a step failed for good: refund the charge in full (idempotent by key), release
 * the discount redemption, mark the order refunded (if it exists) and put the checkout back to `open`
 * (issue #5), without its refunded charge, so the buyer may try again.
 */
export async function compensateCheckout(
  em: EntityManager,
  checkoutId: string,
  processor: PaymentProcessor,
  publicUrl: string,
): Promise<{ refunded: boolean }> {
  const c0 = await em.fork().findOne(Checkout, { id: checkoutId });
  if (!c0) return { refunded: false };
  let refunded = false;
  if (c0.processorChargeId && (c0.totalAmount ?? 0) > 0) {
    await refundUnfulfilledCharge(em, processor, { checkoutId, chargeId: c0.processorChargeId, amount: c0.totalAmount! });
    refunded = true;
  }
  await em.fork().transactional(async (tx) => {
    await releaseRedemption(tx, checkoutId);
    const c = await tx.findOne(Checkout, { id: checkoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!c) return;
    const order = await tx.findOne(Order, { checkout: checkoutId });
    if (order && refunded && order.status !== 'refunded') {
      order.status = 'refunded';
      order.refundedAmount = order.netAmount;
      order.refundedTaxAmount = order.taxAmount;
      await tx.flush();
      await tx.populate(order, ORDER_POPULATE);
      const data = serializeOrder(order);
      emitEvent(tx, order.organization.id, 'order.refunded', data);
      emitEvent(tx, order.organization.id, 'order.updated', data);
    }
    if (c.status === 'confirmed') {
      c.status = 'open';
      c.processorChargeId = null;
      c.processorPaymentMethod = null;
      await tx.flush();
      await tx.populate(c, CHECKOUT_POPULATE);
      emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, publicUrl));
    }
    await tx.flush();
  });
  return { refunded };
}
