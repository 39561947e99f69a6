/** Webhook endpoint secrets, the settings deliveries run with, and the fan-out of outbox events to endpoints (first attempts, retries). */
import { randomBytes } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { Client } from '@temporalio/client';
import { webhookDeliveryWorkflowId } from '@emporia/workflows/ids';
import { type Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Logger } from '../../kit/logger.ts';
import { webhookRetriesRun } from '../../kit/run-metadata.ts';
import { startWorkflowNow } from '../../kit/workflow-starts.ts';
import { open, seal } from '../../kit/secretbox.ts';
import { OutboxEvent, WebhookEndpoint, WebhookEvent } from './entities.ts';
import { runSql } from '../events/sql.ts';

const PURPOSE = 'webhook-endpoint-secret';

export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
export const sealSecret = (cfg: Pick<Config, 'SECRET'>, secret: string) => seal(cfg.SECRET, PURPOSE, secret);
export const endpointSecret = (cfg: Pick<Config, 'SECRET'>, e: Pick<WebhookEndpoint, 'secretSealed'>) => openSecret(cfg, e.secretSealed);
/** An endpoint's signing secret from its sealed column. */
export const openSecret = (cfg: Pick<Config, 'SECRET'>, sealed: string) => open(cfg.SECRET, PURPOSE, sealed);

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

/**
 * Fan-out: claims undispatched outbox events in insertion order (SKIP LOCKED, so several dispatchers
 * can run), creates one WebhookEvent per subscribed enabled endpoint and marks the events dispatched,
 * all in one transaction. Nothing is sent or started here: deliveries begin only from committed rows
 * (deliverFirstAttempts). `beforeCommit` is a test-only hook (fault injection). `ids` limits the claim
 * to those events (fan-out-sql.ts hands over the ones an endpoint subscribes to).
 */
export async function fanOutOutbox(
  em: EntityManager,
  limit = 100,
  beforeCommit?: () => Promise<void>,
  ids?: readonly string[],
): Promise<{ dispatched: number; created: number; full: boolean }> {
  return em.transactional(async (tx) => {
    const events = await tx.find(
      OutboxEvent,
      ids ? { dispatchedAt: null, id: { $in: [...ids] } } : { dispatchedAt: null },
      { orderBy: { seq: 'asc' }, limit, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    if (!events.length) return { dispatched: 0, created: 0, full: false };
    const orgIds = [...new Set(events.map((e) => e.organizationId))];
    const endpoints = await tx.find(WebhookEndpoint, { organization: { $in: orgIds }, enabled: true, deletedAt: null });
    let created = 0;
    const now = new Date();
    for (const event of events) {
      for (const endpoint of endpoints) {
        if (endpoint.organization.id !== event.organizationId || !endpoint.events.includes(event.type)) continue;
        tx.create(WebhookEvent, {
          endpoint,
          outboxEvent: event,
          type: event.type,
          payload: webhookPayload(event, endpoint.format),
          succeeded: null,
          lastHttpCode: null,
          attempts: 0,
          claimedUntil: null,
          retryStartedAt: null,
        });
        created++;
      }
      event.dispatchedAt = now;
    }
    await tx.flush();
    await beforeCommit?.();
    return { dispatched: events.length, created, full: events.length === limit };
  });
}

export interface RetryStart {
  webhookEventId: string;
  outboxEventId: string;
  endpointId: string;
  /** The attempt the workflow makes first (after the backoff of the one before it). */
  firstAttempt: number;
  /** For the run's search attributes and summary (kit/run-metadata.ts), when the caller has them. */
  organizationId?: string | null;
  url?: string | null;
  eventType?: string | null;
}

/**
 * Starts the `webhook-delivery` workflow that owns an event's remaining attempts. Called only after
 * the attempt before it was committed. Answers false when Temporal could not be reached (the sweep in
 * deliverFirstAttempts starts it later). A running workflow of the same id counts as started; a
 * redelivery replaces it.
 */
export async function startRetries(
  temporal: Client,
  cfg: Config,
  taskQueue: string,
  r: RetryStart,
  opts: { redeliver?: boolean; log?: Logger } = {},
): Promise<boolean> {
  const meta = webhookRetriesRun({
    webhookEventId: r.webhookEventId,
    endpointId: r.endpointId,
    organizationId: r.organizationId ?? null,
    url: r.url ?? null,
    eventType: r.eventType ?? null,
    firstAttempt: r.firstAttempt,
  });
  try {
    await startWorkflowNow(
      temporal,
      {
        workflowType: 'webhookDeliveryWorkflow',
        taskQueue,
        workflowId: webhookDeliveryWorkflowId(r.outboxEventId, r.endpointId),
        args: [{ webhookEventId: r.webhookEventId, settings: deliverySettings(cfg), firstAttempt: r.firstAttempt }],
        metadata: meta,
      },
      { workflowIdConflictPolicy: opts.redeliver ? 'TERMINATE_EXISTING' : 'FAIL', workflowIdReusePolicy: 'ALLOW_DUPLICATE' },
    );
    return true;
  } catch (err) {
    opts.log?.warn({ err, webhookEventId: r.webhookEventId }, 'webhook retry start failed; the dispatcher sweep starts it later');
    return false;
  }
}

export async function markRetriesStarted(em: EntityManager, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await runSql(em, `update webhook_events set retry_started_at = now() where id = any($1::uuid[])`, [ids]);
}
