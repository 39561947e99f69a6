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
const steps = proxyActivities<RefundActivities>({ startToCloseTimeout: '1 minute', retry });
const benefits = proxyActivities<Pick<BenefitActivities, 'requestBenefitAction'>>({ startToCloseTimeout: '1 minute', retry });

export async function refundWorkflow({ refundId }: RefundWorkflowInput): Promise<RefundWorkflowResult> {
  const atProcessor = await steps.refundAtProcessorStep.executeWithOptions({ summary: 'Refund at the payment processor' }, [refundId]);
  const settled = await steps.settleRefundStep(refundId, atProcessor);
  if (!settled) return { status: 'missing', benefitsRevoked: false };
  if (settled.status === 'failed') log.warn('refund failed at the processor', { refundId });
  if (!settled.revoke) return { status: settled.status, benefitsRevoked: false };
  await benefits.requestBenefitAction('revoke', settled.revoke);
  return { status: settled.status, benefitsRevoked: true };
}
