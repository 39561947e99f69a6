/**
 * webhook-delivery:<event_id>:<endpoint_id> — delivers one event to one endpoint: signed POST, retried
 * with exponential backoff (base × 2^n, jittered ±25 %, capped) until acknowledged or out of attempts;
 * then the endpoint's health is checked (all of its last N events failed → disabled, members mailed).
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { WebhookActivities } from '../../../workers/src/activities/webhooks.activities.ts';

const { deliverWebhook, webhookEventFailed } = proxyActivities<WebhookActivities>({
  // The HTTP timeout lives inside the activity; this bounds a stuck activity.
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

export interface WebhookDeliveryInput {
  webhookEventId: string;
  settings: { baseDelayMs: number; maxDelayMs: number; maxAttempts: number; disableAfter: number };
}

export function backoffMs(attempt: number, base: number, max: number, random: number): number {
  const raw = Math.min(base * 2 ** (attempt - 1), max);
  return Math.max(1, Math.round(raw * (0.75 + random * 0.5)));
}

export async function webhookDeliveryWorkflow({ webhookEventId, settings }: WebhookDeliveryInput) {
  for (let attempt = 1; attempt <= settings.maxAttempts; attempt++) {
    const result = await deliverWebhook({ webhookEventId, attempt, final: attempt === settings.maxAttempts });
    if (result.outcome === 'delivered') return { delivered: true, attempts: attempt };
    if (result.outcome === 'skipped') return { delivered: false, attempts: attempt - 1 };
    if (attempt < settings.maxAttempts) {
      // Math.random is deterministic inside workflows (seeded per run).
      await sleep(backoffMs(attempt, settings.baseDelayMs, settings.maxDelayMs, Math.random()));
    }
  }
  await webhookEventFailed({ webhookEventId, disableAfter: settings.disableAfter });
  return { delivered: false, attempts: settings.maxAttempts };
}
