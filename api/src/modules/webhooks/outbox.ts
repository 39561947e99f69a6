/** Writes a domain event into the outbox inside the caller's unit of work (flushed with the change). */
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
  return em.create(OutboxEvent, { organizationId, type, data, dispatchedAt: null });
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
