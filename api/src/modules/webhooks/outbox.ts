/**
 * Writes a domain event into the outbox inside the caller's unit of work (flushed with the change).
 * Once its INSERT is flushed the event leaves the identity map (`detachFlushedEvents`): it is never
 * changed afterwards, and a managed event would cost every later flush of the same unit of work (and
 * of the one a transaction merges into) a comparison of its JSON payload, stringified again each time.
 */
import { ChangeSetType, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { OutboxEvent } from './entities.ts';

export const WEBHOOK_EVENT_TYPES = [
  'checkout.created', 'checkout.updated',
  'customer.created', 'customer.updated', 'customer.deleted', 'customer.state_changed',
  'order.created', 'order.paid', 'order.updated', 'order.refunded',
  'subscription.created', 'subscription.updated', 'subscription.active', 'subscription.canceled',
  'subscription.uncanceled', 'subscription.revoked',
  'refund.created', 'refund.updated',
  'product.created', 'product.updated',
  'benefit.created', 'benefit.updated',
  'benefit_grant.created', 'benefit_grant.updated', 'benefit_grant.revoked',
  'organization.updated',
  'pledge.created', 'pledge.updated',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export function emitEvent(
  em: EntityManager,
  organizationId: string,
  type: WebhookEventType,
  data: Record<string, unknown>,
): OutboxEvent {
  detachFlushedEvents(em);
  return em.create(OutboxEvent, { organizationId, type, data, dispatchedAt: null });
}

/** The event managers (one per ORM, shared by its forks) that already detach inserted events. */
const detaching = new WeakSet<object>();

/** Registers, once per ORM, the subscriber that takes outbox events out of the identity map after their INSERT. */
function detachFlushedEvents(em: EntityManager): void {
  const events = em.getEventManager();
  if (detaching.has(events)) return;
  detaching.add(events);
  const subscriber: EventSubscriber = {
    afterFlush({ em: flushed, uow }: FlushEventArgs): void {
      for (const cs of uow.getChangeSets()) {
        if (cs.type === ChangeSetType.CREATE && cs.meta.className === 'OutboxEvent') flushed.getUnitOfWork().unsetIdentity(cs.entity);
      }
    },
  };
  events.registerSubscriber(subscriber);
}

/**
 * Flushes the change, then writes `type` with the read model `serialize` builds from the flushed rows
 * and flushes the event: how a service emits an event for what it just wrote. Returns the read model.
 */
export async function flushAndEmit<T extends Record<string, unknown>>(
  tx: EntityManager,
  organizationId: string,
  type: WebhookEventType,
  serialize: () => T,
): Promise<T> {
  await tx.flush();
  const data = serialize();
  emitEvent(tx, organizationId, type, data);
  await tx.flush();
  return data;
}
