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
