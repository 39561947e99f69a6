/** Webhook endpoints, fan-out of outbox events and the settings delivery workflows run with. */
import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { webhookDeliveryWorkflowId } from '@emporia/workflows/ids';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { open, seal } from '../../kit/secretbox.ts';
import { OutboxEvent, WebhookEndpoint, WebhookEvent } from './entities.ts';

const PURPOSE = 'webhook-endpoint-secret';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
export const sealSecret = (cfg: Pick<Config, 'SECRET'>, secret: string) => seal(cfg.SECRET, PURPOSE, secret);
export const endpointSecret = (cfg: Pick<Config, 'SECRET'>, e: WebhookEndpoint) => open(cfg.SECRET, PURPOSE, e.secretSealed);

export interface DeliverySettings {
  baseDelayMs: number;
  maxDelayMs: number;
  maxAttempts: number;
  disableAfter: number;
}

export function deliverySettings(cfg: Config): DeliverySettings {
  return {
    baseDelayMs: cfg.WEBHOOK_RETRY_BASE_MS,
    maxDelayMs: cfg.WEBHOOK_RETRY_MAX_MS,
    maxAttempts: cfg.WEBHOOK_MAX_ATTEMPTS,
    disableAfter: cfg.WEBHOOK_DISABLE_AFTER,
  };
}

/** The body every attempt sends: `{type, timestamp, data}` (Standard Webhooks envelope). */
export function webhookPayload(event: OutboxEvent, format: WebhookEndpoint['format']): string {
  const envelope = { type: event.type, timestamp: event.createdAt.toISOString(), data: event.data };
  if (format === 'raw') return JSON.stringify(envelope);
  const summary = `${event.type} · ${String((event.data as { id?: unknown }).id ?? '')}`;
  if (format === 'slack') return JSON.stringify({ text: summary, blocks: [{ type: 'section', text: { type: 'mrkdwn', text: `*${event.type}*\n\`${String((event.data as { id?: unknown }).id ?? '')}\`` } }] });
  return JSON.stringify({ content: summary, embeds: [{ title: event.type, timestamp: envelope.timestamp }] });
}

export async function startDelivery(
  temporal: Client,
  cfg: Config,
  taskQueue: string,
  webhookEvent: { id: string; outboxEventId: string; endpointId: string },
  opts: { redeliver?: boolean } = {},
): Promise<void> {
  try {
    await temporal.workflow.start('webhookDeliveryWorkflow', {
      taskQueue,
      // A redelivery replaces a delivery still in progress (its attempts start over).
      workflowIdConflictPolicy: opts.redeliver ? 'TERMINATE_EXISTING' : 'FAIL',
      workflowId: webhookDeliveryWorkflowId(webhookEvent.outboxEventId, webhookEvent.endpointId),
      args: [{ webhookEventId: webhookEvent.id, settings: deliverySettings(cfg) }],
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * Claims undispatched outbox events (SKIP LOCKED, so several dispatchers can run), creates one
 * WebhookEvent per subscribed enabled endpoint, starts each delivery workflow, then commits. A
 * delivery started for a transaction that then fails finds no WebhookEvent and ends quietly.
 */
export async function dispatchOutbox(em: EntityManager, temporal: Client, cfg: Config, taskQueue: string, limit = 100): Promise<number> {
  return em.transactional(async (tx) => {
    const events = await tx.find(
      OutboxEvent,
      { dispatchedAt: null },
      { orderBy: { createdAt: 'asc' }, limit, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    if (!events.length) return 0;
    const orgIds = [...new Set(events.map((e) => e.organizationId))];
    const endpoints = await tx.find(WebhookEndpoint, { organization: { $in: orgIds }, enabled: true, deletedAt: null });
    const created: { id: string; outboxEventId: string; endpointId: string }[] = [];
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.organization.id !== event.organizationId || !endpoint.events.includes(event.type)) continue;
        const we = tx.create(WebhookEvent, {
          endpoint,
          outboxEvent: event,
          type: event.type,
          payload: webhookPayload(event, endpoint.format),
          succeeded: null,
          lastHttpCode: null,
          attempts: 0,
        });
        created.push({ id: we.id, outboxEventId: event.id, endpointId: endpoint.id });
      }
      event.dispatchedAt = new Date();
    }
    await tx.flush();
    for (const we of created) await startDelivery(temporal, cfg, taskQueue, we);
    return events.length;
  });
}
