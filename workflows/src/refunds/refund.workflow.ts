/**
 * refund:<refund_id> — processes one refund created (pending, amount reserved) by POST /v1/refunds/:
 * refund at the processor, settle the refund and the order's refunded amounts and status, then,
 * when the refund asked for it on a one-time order, revoke the benefits the order granted.
 * Each step is an idempotent activity, so retries and replays never refund twice.
 */
import { log, proxyActivities } from '@temporalio/workflow';
import type { BenefitActivities } from '../benefits/contract.ts';
import type { RefundActivities, RefundWorkflowInput, RefundWorkflowResult } from './contract.ts';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 };
// The processor step heartbeats (workers/src/activities/refunds.activities.ts): a worker lost mid-refund
// is noticed after 10 s, not after the 1-minute attempt limit, and the retry repeats the refund under the
// same idempotency key (the processor answers the refund it already made). docs/durability.md.
const steps = proxyActivities<RefundActivities>({ startToCloseTimeout: '1 minute', retry });
const atProcessor = proxyActivities<Pick<RefundActivities, 'refundAtProcessorStep'>>({
  startToCloseTimeout: '1 minute',
  heartbeatTimeout: '10 seconds',
  retry,
});
const benefits = proxyActivities<Pick<BenefitActivities, 'requestBenefitAction'>>({ startToCloseTimeout: '1 minute', retry });

export async function refundWorkflow({ refundId }: RefundWorkflowInput): Promise<RefundWorkflowResult> {
  const charged = await atProcessor.refundAtProcessorStep.executeWithOptions({ summary: 'Refund at the payment processor' }, [refundId]);
  const settled = await steps.settleRefundStep(refundId, charged);
  if (!settled) return { status: 'missing', benefitsRevoked: false };
  if (settled.status === 'failed') log.warn('refund failed at the processor', { refundId });
  if (!settled.revoke) return { status: settled.status, benefitsRevoked: false };
  await benefits.requestBenefitAction('revoke', settled.revoke);
  return { status: settled.status, benefitsRevoked: true };
}
