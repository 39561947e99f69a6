/** The webhook workflows' inputs and their activities. */
import type { deliverAttempt, deliverFirstAttempts } from '../../../api/src/modules/webhooks/service.ts';
import type { Answer } from '../contract-types.ts';

export interface OutboxDispatcherInput {
  idleSeconds?: number;
  /** Loop iterations before continue-as-new. */
  maxIterations?: number;
  /** History events before continue-as-new (default DISPATCHER_HISTORY_LIMIT). */
  historyLimit?: number;
  /** First-attempt batches running at once. */
  maxInFlight?: number;
}

export interface WebhookDeliveryInput {
  webhookEventId: string;
  settings: { baseDelayMs: number; maxDelayMs: number; maxAttempts: number; disableAfter: number };
  /** The attempt this run makes first; attempts before it were made already (default 1: a redelivery). */
  firstAttempt?: number;
}

export interface WebhookActivities {
  /** Fans undispatched outbox events out to the subscribed endpoints (one transaction). */
  fanOutOutbox(): Promise<{ dispatched: number; created: number; full: boolean }>;
  /** POSTs a batch of first attempts; failed ones get a retry workflow. */
  deliverFirstAttempts(): Answer<typeof deliverFirstAttempts>;
  /** One attempt of a retry workflow. Never throws for an HTTP failure: the workflow owns the schedule. */
  deliverWebhook(input: { webhookEventId: string; attempt: number; final: boolean }): Answer<typeof deliverAttempt>;
  /** After an event's last attempt failed: disable the endpoint when its last N events all failed, and tell the members. */
  webhookEventFailed(input: { webhookEventId: string; disableAfter: number }): Promise<{ disabled: boolean }>;
}
