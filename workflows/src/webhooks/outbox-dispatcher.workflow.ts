/**
 * webhook-dispatcher:<task_queue> — long-lived: turns committed outbox events into webhook deliveries.
 * Woken by a `wake` signal (the worker relays PostgreSQL NOTIFYs sent on commit); polls at least every
 * `idleSeconds` in case a wake-up was lost. Each round:
 *  1. fan-out (a local activity, one transaction): outbox events → one webhook event per endpoint;
 *  2. first attempts (local activities, up to `maxInFlight` batches at once so a slow receiver does
 *     not hold up the others): claim committed events with a lease, POST, record, and start a
 *     `webhook-delivery` workflow only for the ones that failed.
 * Nothing is started before the rows it reads are committed. Continues as new to keep its history short:
 * once the run's history reaches `historyLimit` events (or Temporal suggests it), so that a worker
 * starting cold replays at most that much before its first workflow task (a run of 500 iterations grew
 * to about 3,300 events and took 5.4 s to replay). Runs started before the limit existed keep the
 * iteration count alone (`patched`): tests/webhooks/dispatcher-history.test.ts replays one.
 */
import { condition, continueAsNew, defineSignal, patched, proxyLocalActivities, setHandler, workflowInfo } from '@temporalio/workflow';
import type { OutboxDispatcherInput, WebhookActivities } from './contract.ts';
import { WEBHOOK_FIRST_ATTEMPT_BATCH as FIRST_ATTEMPT_BATCH } from '../ids.ts';

const retry = { initialInterval: '1 second', maximumInterval: '30 seconds' };
const { fanOutOutbox } = proxyLocalActivities<WebhookActivities>({ startToCloseTimeout: '1 minute', localRetryThreshold: '10 seconds', retry });
// A batch waits for its slowest receiver (WEBHOOK_TIMEOUT_MS at most, twice); its lease outlives this.
const { deliverFirstAttempts } = proxyLocalActivities<WebhookActivities>({
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '10 seconds',
  retry,
  summary: 'POST a batch of first attempts to webhook endpoints (receivers)',
});

export const wakeSignal = defineSignal('wake');

/** History events a run may reach before it continues as new (about 60 wake-ups of the busy path). */
export const DISPATCHER_HISTORY_LIMIT = 400;

export async function outboxDispatcherWorkflow(input: OutboxDispatcherInput = {}): Promise<void> {
  const idle = input.idleSeconds ?? 30;
  const maxInFlight = input.maxInFlight ?? 3;
  let woken = true;
  // `pending`: committed webhook events may be waiting for their first attempt (or a lost retry start).
  let pending = true;
  setHandler(wakeSignal, () => {
    woken = true;
    pending = true;
  });
  let inFlight = 0;
  const launch = () => {
    pending = false;
    inFlight++;
    void deliverFirstAttempts()
      .then((r) => {
        if (r.full) pending = true;
      })
      .catch(() => {
        // Retried by the activity's policy first; a batch that still fails is claimed again after its lease.
        pending = true;
      })
      .finally(() => {
        inFlight--;
      });
  };

  const bounded = patched('dispatcher-history-limit');
  const historyLimit = input.historyLimit ?? DISPATCHER_HISTORY_LIMIT;
  const historyFull = () => {
    const info = workflowInfo();
    return info.historyLength >= historyLimit || info.continueAsNewSuggested;
  };
  for (let i = 0; i < (input.maxIterations ?? 500); i++) {
    if (bounded && historyFull()) break;
    woken = false;
    const fanned = await fanOutOutbox();
    if (fanned.created > 0) pending = true;
    // One batch per FIRST_ATTEMPT_BATCH new deliveries, as many as may run at once.
    let batches = Math.max(1, Math.ceil(fanned.created / FIRST_ATTEMPT_BATCH));
    while (pending && inFlight < maxInFlight && batches-- > 0) {
      launch();
      if (batches > 0) pending = true;
    }
    if (fanned.full) continue;
    const timedOut = !(await condition(() => woken || (pending && inFlight < maxInFlight), `${idle} seconds`));
    // An idle tick also looks for leases that passed and retry starts that were lost.
    if (timedOut) pending = true;
  }
  await condition(() => inFlight === 0);
  await continueAsNew<typeof outboxDispatcherWorkflow>(input);
}
