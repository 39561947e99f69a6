/**
 * outbox-dispatcher:<task_queue> — long-lived: fans committed outbox events out to webhook endpoints.
 * Woken by a `wake` signal (the worker relays PostgreSQL NOTIFYs sent on commit); polls at least every
 * `idleSeconds` in case a wake-up was lost. Continues as new to keep its history short.
 * Each fan-out is a local activity (one short transaction): a wake-up costs one workflow task. A
 * fan-out re-run (its task failed or was rejected) only finds the events not marked dispatched yet.
 */
import { condition, continueAsNew, defineSignal, patched, proxyActivities, proxyLocalActivities, setHandler } from '@temporalio/workflow';
import type { WebhookActivities } from '../../../workers/src/activities/webhooks.activities.ts';

const retry = { initialInterval: '1 second', maximumInterval: '30 seconds' };
const remote = proxyActivities<WebhookActivities>({ startToCloseTimeout: '1 minute', retry });
const local = proxyLocalActivities<WebhookActivities>({ startToCloseTimeout: '1 minute', localRetryThreshold: '10 seconds', retry });

export const wakeSignal = defineSignal('wake');

export interface OutboxDispatcherInput {
  idleSeconds?: number;
  /** Loop iterations before continue-as-new. */
  maxIterations?: number;
}

export async function outboxDispatcherWorkflow(input: OutboxDispatcherInput = {}): Promise<void> {
  const idle = input.idleSeconds ?? 30;
  // Runs recorded before the fan-out became a local activity replay with activity tasks.
  const { dispatchOutbox } = patched('outbox-dispatch-local') ? local : remote;
  let woken = true;
  setHandler(wakeSignal, () => {
    woken = true;
  });
  for (let i = 0; i < (input.maxIterations ?? 500); i++) {
    woken = false;
    const dispatched = await dispatchOutbox();
    if (dispatched.full) continue;
    await condition(() => woken, `${idle} seconds`);
  }
  await continueAsNew<typeof outboxDispatcherWorkflow>(input);
}
