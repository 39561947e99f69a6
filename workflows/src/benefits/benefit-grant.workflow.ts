/**
 * benefit-grant:<benefit_id>:<customer_id> — applies the grant and revoke requests of one benefit for
 * one customer, in the order they arrive (`benefitAction` signals, usually through signalWithStart),
 * each with a retrying idempotent activity. Completes when no request is left; a request that comes
 * while it is completing makes Temporal reject the completion and deliver the signal first, and one
 * that comes after it closed starts a new run with the same id. Continues as new after many requests,
 * carrying the queue.
 */
import { condition, continueAsNew, defineSignal, log, proxyActivities, setHandler } from '@temporalio/workflow';
import type { BenefitActionRequest, BenefitActivities, BenefitGrantWorkflowInput } from './contract.ts';

const acts = proxyActivities<BenefitActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 20 },
});

export const benefitActionSignal = defineSignal<[BenefitActionRequest]>('benefitAction');

/** Requests handled by one run before it continues as new. */
const MAX_PER_RUN = 200;

export async function benefitGrantWorkflow(input: BenefitGrantWorkflowInput): Promise<{ processed: number }> {
  const queue: BenefitActionRequest[] = [...(input.pending ?? [])];
  setHandler(benefitActionSignal, (req) => {
    queue.push(req);
  });
  // Started without a request (or the signal is still on its way): wait briefly for one.
  if (!queue.length) await condition(() => queue.length > 0, '10 seconds');
  let processed = 0;
  while (queue.length) {
    if (processed >= (input.maxPerRun ?? MAX_PER_RUN)) {
      await continueAsNew<typeof benefitGrantWorkflow>({ ...input, pending: [...queue] });
    }
    const req = queue.shift()!;
    try {
      await acts.applyBenefitAction.executeWithOptions({ summary: `${req.action} the benefit (GitHub / Discord for those types)` }, [
        { ...req, benefitId: input.benefitId, customerId: input.customerId },
      ]);
    } catch (err) {
      // Retries exhausted: keep going with the next request; the grant keeps its last state.
      log.error('benefit action failed', { ...req, benefitId: input.benefitId, customerId: input.customerId, error: String(err) });
    }
    processed++;
  }
  return { processed };
}
