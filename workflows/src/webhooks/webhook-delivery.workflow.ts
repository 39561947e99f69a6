/**
 * webhook-delivery:<event_id>:<endpoint_id> — the retries of one event to one endpoint, started after
 * its first attempt (made by the dispatcher) failed and was committed, or by a redelivery. Signed POST,
 * retried with exponential backoff (base × 2^n, jittered ±25 %, capped) until acknowledged or out of
 * attempts; then the endpoint's health is checked (all of its last N events failed → disabled, members
 * mailed). A missing event fails the workflow (visible in the Temporal UI), never a quiet success.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities, WebhookDeliveryInput } from './contract.ts';

const { deliverWebhook, webhookEventFailed } = proxyActivities<WebhookActivities>({
  // The HTTP timeout lives inside the activity; this bounds a stuck activity.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export function backoffMs(attempt: number, base: number, max: number, random: number): number {
  const raw = Math.min(base * 2 ** (attempt - 1), max);
  return Math.max(1, Math.round(raw * (0.75 + random * 0.5)));
}

export async function webhookDeliveryWorkflow({ webhookEventId, settings, firstAttempt = 1 }: WebhookDeliveryInput) {
  for (let attempt = firstAttempt; attempt <= settings.maxAttempts; attempt++) {
    // Math.random is deterministic inside workflows (seeded per run).
    if (attempt > 1) await sleep(backoffMs(attempt - 1, settings.baseDelayMs, settings.maxDelayMs, Math.random()));
    const result = await deliverWebhook.executeWithOptions({ summary: `POST attempt #${attempt} to the webhook endpoint (receiver)` }, [
      { webhookEventId, attempt, final: attempt === settings.maxAttempts },
    ]);
    if (result.outcome === 'delivered') return { delivered: true, attempts: attempt };
    if (result.outcome === 'skipped') return { delivered: false, attempts: attempt, skipped: 'endpoint disabled' };
  }
  await webhookEventFailed({ webhookEventId, disableAfter: settings.disableAfter });
  return { delivered: false, attempts: settings.maxAttempts };
}
