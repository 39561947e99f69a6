/** The steps of the refund workflow (see api/src/modules/refunds/processing.ts), each on its own fork. */
import type { Deps } from '@emporia/api/src/deps.ts';
import { processorFor } from '@emporia/api/src/modules/checkouts/confirm.ts';
import {
  refundAtProcessor,
  settleRefund,
  type ProcessorRefundResult,
  type SettledRefund,
} from '@emporia/api/src/modules/refunds/processing.ts';

export function createRefundActivities(deps: Deps) {
  const { orm, cfg } = deps;
  return {
    async refundAtProcessorStep(refundId: string): Promise<ProcessorRefundResult> {
      return refundAtProcessor(orm.em.fork(), processorFor(cfg, orm), refundId);
    },
    async settleRefundStep(refundId: string, result: ProcessorRefundResult): Promise<SettledRefund | null> {
      return settleRefund(orm.em.fork(), refundId, result);
    },
  };
}

export type RefundActivities = ReturnType<typeof createRefundActivities>;
