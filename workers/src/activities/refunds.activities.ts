/** The steps of the refund workflow (see api/src/modules/refunds/processing.ts), each on its own fork. */
import type { Deps } from '@emporia/api/src/deps.ts';
import type { RefundActivities } from '@emporia/workflows/contracts';
import {
  refundAtProcessor,
  settleRefund,
  type ProcessorRefundResult,
  type SettledRefund,
} from '@emporia/api/src/modules/refunds/processing.ts';

export function createRefundActivities(deps: Deps): RefundActivities {
  const { orm } = deps;
  return {
    async refundAtProcessorStep(refundId: string): Promise<ProcessorRefundResult> {
      return refundAtProcessor(orm.em.fork(), deps.processor, refundId);
    },
    async settleRefundStep(refundId: string, result: ProcessorRefundResult): Promise<SettledRefund | null> {
      return settleRefund(orm.em.fork(), refundId, result);
    },
  };
}

export type { RefundActivities };
