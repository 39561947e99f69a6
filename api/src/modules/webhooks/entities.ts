/**
 * The outbox and webhook delivery (docs/webhooks.md).
 * - OutboxEvent: every domain event (product.created, customer.updated, …), written in the same
 *   transaction as the change that caused it. A trigger NOTIFYs `outbox_events` on commit.
 * - WebhookEndpoint: where an organization wants events (signing secret sealed at rest).
 * - WebhookEvent: one outbox event for one endpoint (its id is the `webhook-id` header); `succeeded`
 *   is null while delivery is in progress.
 * - WebhookDelivery: one HTTP attempt.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const OutboxEvent = defineEntity({
  name: 'OutboxEvent',
  tableName: 'outbox_events',
  properties: {
    ...baseProperties,
    organizationId: p.uuid().index(),
    /** Webhook event type, e.g. `product.created`. */
    type: p.string(),
    /** The resource's public read model at the time of the event (the webhook `data`). */
    data: p.json<Record<string, unknown>>(),
    /** Insertion order: the dispatcher claims events by it (created_at can tie within a statement). */
    seq: p.bigint('number').autoincrement(),
    /** Set once the event has been fanned out to the endpoints. */
    dispatchedAt: p.datetime().nullable().index(),
  },
  indexes: [
    {
      name: 'outbox_events_undispatched_seq_index',
      expression: `create index "outbox_events_undispatched_seq_index" on "outbox_events" ("seq") where "dispatched_at" is null`,
    },
  ],
});
export type OutboxEvent = InferEntity<typeof OutboxEvent>;

export const WEBHOOK_FORMATS = ['raw', 'discord', 'slack'] as const;

export const WebhookEndpoint = defineEntity({
  name: 'WebhookEndpoint',
  tableName: 'webhook_endpoints',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    url: p.text(),
    format: p.enum(WEBHOOK_FORMATS),
    /** The signing secret, sealed with kit/secretbox (it must be read back to sign). */
    secretSealed: p.text().hidden(),
    events: p.array(),
    enabled: p.boolean().default(true),
    disabledAt: p.datetime().nullable(),
    deletedAt: p.datetime().nullable(),
  },
});
export type WebhookEndpoint = InferEntity<typeof WebhookEndpoint>;

export const WebhookEvent = defineEntity({
  name: 'WebhookEvent',
  tableName: 'webhook_events',
  properties: {
    ...baseProperties,
    endpoint: () => p.manyToOne(WebhookEndpoint).deleteRule('cascade').index(),
    outboxEvent: () => p.manyToOne(OutboxEvent).deleteRule('cascade'),
    type: p.string(),
    /** The exact body sent on every attempt. */
    payload: p.text(),
    succeeded: p.boolean().nullable(),
    lastHttpCode: p.integer().nullable(),
    attempts: p.integer().default(0),
    /** Lease of the dispatcher's first attempt: another dispatcher takes the event over once it passes. */
    claimedUntil: p.datetime().nullable(),
    /** When the `webhook-delivery` workflow that owns the retries was started (null: not started yet). */
    retryStartedAt: p.datetime().nullable(),
  },
  uniques: [{ properties: ['outboxEvent', 'endpoint'] }],
  indexes: [
    {
      name: 'webhook_events_in_flight_index',
      expression: `create index "webhook_events_in_flight_index" on "webhook_events" ("created_at") where "succeeded" is null and "retry_started_at" is null`,
    },
  ],
});
export type WebhookEvent = InferEntity<typeof WebhookEvent>;

export const WebhookDelivery = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    ...baseProperties,
    webhookEvent: () => p.manyToOne(WebhookEvent).deleteRule('cascade').index(),
    attempt: p.integer(),
    succeeded: p.boolean(),
    httpCode: p.integer().nullable(),
    /** First 2 KB of the response body, or the network error. */
    response: p.text().nullable(),
    durationMs: p.integer(),
  },
});
export type WebhookDelivery = InferEntity<typeof WebhookDelivery>;

export const webhookEntities = [OutboxEvent, WebhookEndpoint, WebhookEvent, WebhookDelivery];
