/**
 * The outbox: every domain event (product.created, customer.updated, …) is written here in the same
 * transaction as the change that caused it. The webhook issue fans these out to endpoints.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';

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
    /** Set once the event has been handed to delivery. */
    dispatchedAt: p.datetime().nullable().index(),
  },
});
export type OutboxEvent = InferEntity<typeof OutboxEvent>;
