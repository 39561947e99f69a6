/**
 * Refund rules. `createRefund` runs in the caller's transaction with the order row locked
 * (SELECT ... FOR UPDATE): what is refunded or held by pending refunds is read under that lock
 * and the new refund row is written before it is released, so concurrent refunds of one order are
 * serialized and their sum never exceeds the order's net amount. The processor call and the order's
 * refunded amounts follow in the `refund:<id>` workflow (processing.ts).
 */
import { LockMode } from '@mikro-orm/core';
import { refundWorkflowId } from '@emporia/workflows/ids';
import type { Deps } from '../../deps.ts';
import type { AfterCommit } from '../../kit/route-helpers.ts';
import { refundRun } from '../../kit/run-metadata.ts';
import { startWorkflow } from '../../kit/workflow-starts.ts';
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { Order } from '../orders/entities.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { refundTax } from '../pricing/index.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Refund } from './entities.ts';
import { serializeRefund, type RefundCreate } from './schemas.ts';

export const RefundAmountTooHigh = (detail: string) => new ApiError(400, 'RefundAmountTooHigh', detail);
export const RefundedAlready = (detail = 'Order is already fully refunded.') => new ApiError(403, 'RefundedAlready', detail);
export const RevokeSubscriptionBenefitsProhibited = () =>
  new ApiError(
    400,
    'RevokeSubscriptionBenefitsProhibited',
    'Subscription benefits can only be revoked upon cancellation of the subscription; refund without revoke_benefits.',
  );

/**
 * Net and tax of the order already refunded or held back: the order's refunded amounts (settled
 * refunds, or a refund by the checkout's compensation) plus its pending refunds.
 */
export async function reservedOn(em: EntityManager, order: Order): Promise<{ amount: number; taxAmount: number }> {
  const pending = await em.find(Refund, { order: order.id, status: 'pending' }, { fields: ['amount', 'taxAmount'] });
  return {
    amount: order.refundedAmount + pending.reduce((s, r) => s + r.amount, 0),
    taxAmount: order.refundedTaxAmount + pending.reduce((s, r) => s + r.taxAmount, 0),
  };
}

/**
 * A pending refund of `body.amount` (tax excluded) on one of the caller's orders, with refund.created
 * in the outbox. Flushes; the caller commits and then starts the workflow.
 */
export async function createRefund(tx: EntityManager, principal: Principal, body: RefundCreate): Promise<Refund> {
  const orgIds = await visibleOrganizationIds(tx, principal);
  const order = await tx.findOne(
    Order,
    { id: body.order_id, organization: { $in: orgIds } },
    { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true },
  );
  if (!order) throw fieldError(['body', 'order_id'], 'Order does not exist.', 'value_error', body.order_id);
  if (order.status === 'pending') throw fieldError(['body', 'order_id'], 'Order is not paid.', 'value_error', body.order_id);
  if (body.revoke_benefits && order.subscription) throw RevokeSubscriptionBenefitsProhibited();

  const reserved = await reservedOn(tx, order);
  const remaining = order.netAmount - reserved.amount;
  if (order.status === 'refunded' || (order.netAmount > 0 && remaining <= 0)) throw RefundedAlready();
  if (body.amount > remaining) {
    throw RefundAmountTooHigh(`Refund amount (${body.amount}) exceeds the refundable amount of the order (${Math.max(remaining, 0)}).`);
  }
  const taxAmount = refundTax(
    { netAmount: order.netAmount, taxAmount: order.taxAmount, refundedAmount: reserved.amount, refundedTaxAmount: reserved.taxAmount },
    body.amount,
  );
  const refund = tx.create(Refund, {
    organization: order.organization,
    order,
    subscription: order.subscription ?? null,
    customer: order.customer,
    status: 'pending',
    reason: body.reason,
    amount: body.amount,
    taxAmount,
    currency: order.currency,
    comment: body.comment ?? null,
    revokeBenefits: body.revoke_benefits,
    metadata: { ...body.metadata },
    processorRefundId: null,
    failureReason: null,
  });
  await tx.flush();
  emitEvent(tx, order.organization.id, 'refund.created', serializeRefund(refund));
  await tx.flush();
  return refund;
}

/**
 * POST /v1/refunds/: reserves the refund and records its `refund:<id>` workflow with it (if this
 * process dies after commit, the worker's sweeper starts it); answers the pending refund.
 */
export async function requestRefund(tx: EntityManager, afterCommit: AfterCommit, deps: Deps, principal: Principal, body: RefundCreate) {
  const refund = await createRefund(tx, principal, body);
  startWorkflow(tx, afterCommit, deps, {
    workflowType: 'refundWorkflow',
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    workflowId: refundWorkflowId(refund.id),
    args: [{ refundId: refund.id }],
    metadata: refundRun({
      refundId: refund.id,
      organizationId: refund.organization.id,
      orderId: refund.order.id,
      customerId: refund.customer.id,
      // The email only when the order's customer is loaded (no extra query for a summary).
      customerEmail: (refund.customer.email as string | undefined) ?? null,
      amount: refund.amount,
      currency: refund.currency,
      revokeBenefits: refund.revokeBenefits,
    }),
  });
  await tx.flush();
  return serializeRefund(refund);
}
