/** The refund workflow's input and result, and its activities. */
import type { refundAtProcessor, settleRefund } from '../../../api/src/modules/refunds/processing.ts';
import type { Answer } from '../contract-types.ts';

export interface RefundWorkflowInput {
  refundId: string;
}

export interface RefundWorkflowResult {
  status: 'succeeded' | 'failed' | 'pending' | 'canceled' | 'missing';
  benefitsRevoked: boolean;
}

export interface RefundActivities {
  refundAtProcessorStep(refundId: string): Answer<typeof refundAtProcessor>;
  settleRefundStep(refundId: string, result: Awaited<ReturnType<typeof refundAtProcessor>>): Answer<typeof settleRefund>;
}
