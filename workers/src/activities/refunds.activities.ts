/** The steps of the refund workflow (see api/src/modules/refunds/processing.ts), each on its own fork. */
import { Context } from '@temporalio/activity';
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
      // Heartbeats while the processor answers: a worker that dies mid-call is noticed within the
      // workflow's heartbeat timeout and the refund retried elsewhere with the same idempotency key.
      return whileHeartbeating(() => refundAtProcessor(orm.em.fork(), deps.processor, refundId));
    },
    async settleRefundStep(refundId: string, result: ProcessorRefundResult): Promise<SettledRefund | null> {
      return settleRefund(orm.em.fork(), refundId, result);
    },
  };
}

/** How often a long activity step reports it is alive (well inside the workflow's heartbeat timeout). */
const HEARTBEAT_EVERY_MS = 2_000;

async function whileHeartbeating<T>(work: () => Promise<T>): Promise<T> {
  const ctx = Context.current();
  ctx.heartbeat();
  const beat = setInterval(() => ctx.heartbeat(), HEARTBEAT_EVERY_MS);
  try {
    return await work();
  } finally {
    clearInterval(beat);
  }
}

export type { RefundActivities };
