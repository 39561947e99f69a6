/** Webhook deliveries: first attempts in batches, one attempt of a retry, failures, disabled endpoints and the backlog. */
import type { Client } from '@temporalio/client';
import { webhookAllowsPrivateUrls, type Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Logger } from '../../kit/logger.ts';
import { Member } from '../organizations/entities.ts';
import { Notification } from '../notifications/entities.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from './entities.ts';
import { runSql } from '../events/sql.ts';
import { sendWebhook } from './sender.ts';
import { webhookHeaders } from './signing.ts';
import { endpointSecret, markRetriesStarted, openSecret, startRetries } from './fan-out.ts';

interface ClaimedRow {
  id: string;
  outbox_event_id: string;
  endpoint_id: string;
  type: string;
  organization_id: string;
  payload: string;
  url: string;
  secret_sealed: string;
  enabled: boolean;
  deleted_at: Date | null;
}

export interface FirstAttemptSettings {
  taskQueue: string;
  limit: number;
  /** How many POSTs of a batch run at once. */
  concurrency: number;
  /** How long a claimed batch is ours before another dispatcher may take it over (a crashed worker). */
  leaseSeconds: number;
  /** A failed attempt whose retry workflow was not started after this long is started by the sweep. */
  sweepGraceSeconds: number;
}

export interface FirstAttemptsResult {
  claimed: number;
  delivered: number;
  failed: number;
  full: boolean;
  /** Retry workflows the sweep started for attempts whose start had been lost. */
  recovered: number;
}

/**
 * The dispatcher's hot path: claims (with a lease) committed webhook events that were never
 * attempted, sends each once, records every attempt in one statement, then starts a retry workflow
 * for each failure. An event stays claimable until its attempt is recorded, so a crash anywhere here
 * means it is sent again once the lease passes (at-least-once; the `webhook-id` stays the same).
 */
export async function deliverFirstAttempts(
  em: EntityManager,
  temporal: Client,
  cfg: Config,
  log: Logger,
  s: FirstAttemptSettings,
  hooks: {
    onFinalFailure: (webhookEventId: string) => Promise<void>;
    /** Test-only fault points (workers/src/fault-injection.ts). */
    afterSend?: () => void;
    beforeRetryStarts?: () => void;
  },
): Promise<FirstAttemptsResult> {
  const recovered = await sweepLostRetries(em, temporal, cfg, log, s);
  const { rows } = await runSql<ClaimedRow>(
    em,
    `with claimed as (
       update webhook_events w set claimed_until = now() + make_interval(secs => $1)
       where w.id in (
         select id from webhook_events
         where succeeded is null and retry_started_at is null and attempts = 0
           and (claimed_until is null or claimed_until < now())
         order by created_at limit $2 for update skip locked)
       returning w.id, w.outbox_event_id, w.endpoint_id, w.type, w.payload, w.claimed_until)
     select c.id, c.outbox_event_id, c.endpoint_id, c.type, c.payload, e.url, e.organization_id, e.secret_sealed, e.enabled, e.deleted_at
     from claimed c join webhook_endpoints e on e.id = c.endpoint_id`,
    [s.leaseSeconds, s.limit],
  );
  if (!rows.length) return { claimed: 0, delivered: 0, failed: 0, full: false, recovered };

  const allowPrivate = webhookAllowsPrivateUrls(cfg);
  const final = cfg.WEBHOOK_MAX_ATTEMPTS <= 1;
  const results: { id: string; ok: boolean; httpCode: number | null; summary: string; durationMs: number }[] = [];
  let next = 0;
  const work = async () => {
    while (next < rows.length) {
      const row = rows[next++]!;
      const started = Date.now();
      if (!row.enabled || row.deleted_at) {
        results.push({ id: row.id, ok: false, httpCode: null, summary: 'not sent: the endpoint is disabled', durationMs: 0 });
        continue;
      }
      const secret = openSecret(cfg, row.secret_sealed);
      const r = await sendWebhook({
        url: row.url,
        headers: webhookHeaders(secret, row.id, row.payload),
        body: row.payload,
        timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
        allowPrivate,
      });
      const ok = r.httpCode !== null && r.httpCode >= 200 && r.httpCode < 300;
      results.push({ id: row.id, ok, httpCode: r.httpCode, summary: r.summary, durationMs: Date.now() - started });
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.concurrency, rows.length) }, work));
  hooks.afterSend?.();

  const skipped = new Set(rows.filter((r) => !r.enabled || r.deleted_at).map((r) => r.id));
  await em.transactional(async (tx) => {
    await runSql(
      tx,
      `insert into webhook_deliveries (id, created_at, webhook_event_id, attempt, succeeded, http_code, response, duration_ms)
       select gen_random_uuid(), now(), v.id, 1, v.ok, v.code, v.summary, v.ms
       from unnest($1::uuid[], $2::boolean[], $3::int[], $4::text[], $5::int[]) as v(id, ok, code, summary, ms)`,
      [results.map((r) => r.id), results.map((r) => r.ok), results.map((r) => r.httpCode), results.map((r) => r.summary), results.map((r) => r.durationMs)],
    );
    await runSql(
      tx,
      `update webhook_events w set attempts = greatest(w.attempts, 1), last_http_code = v.code, claimed_until = null,
         modified_at = now(), succeeded = case when v.ok then true when v.final then false else null end
       from unnest($1::uuid[], $2::boolean[], $3::int[], $4::boolean[]) as v(id, ok, code, final)
       where w.id = v.id`,
      [results.map((r) => r.id), results.map((r) => r.ok), results.map((r) => r.httpCode), results.map((r) => final || skipped.has(r.id))],
    );
  });

  // Committed: now the failures get their retry workflows (a start lost here is swept up later).
  hooks.beforeRetryStarts?.();
  const failures = results.filter((r) => !r.ok);
  const byId = new Map(rows.map((r) => [r.id, r]));
  if (final) {
    for (const f of failures) if (!skipped.has(f.id)) await hooks.onFinalFailure(f.id);
  } else {
    const toRetry = failures.filter((f) => !skipped.has(f.id));
    const started: string[] = [];
    await Promise.all(
      toRetry.map(async (f) => {
        const row = byId.get(f.id)!;
        const ok = await startRetries(
          temporal,
          cfg,
          s.taskQueue,
          { webhookEventId: f.id, outboxEventId: row.outbox_event_id, endpointId: row.endpoint_id, firstAttempt: 2, organizationId: row.organization_id, url: row.url, eventType: row.type },
          { log },
        );
        if (ok) started.push(f.id);
      }),
    );
    await markRetriesStarted(em, started);
  }
  return { claimed: rows.length, delivered: results.length - failures.length, failed: failures.length, full: rows.length === s.limit, recovered };
}

/** Starts the retry workflows of attempted, unfinished events whose start was lost (a crash or an outage after the attempt's commit). */
async function sweepLostRetries(em: EntityManager, temporal: Client, cfg: Config, log: Logger, s: FirstAttemptSettings): Promise<number> {
  const { rows: lost } = await runSql<{ id: string; outbox_event_id: string; endpoint_id: string; attempts: number; type: string; url: string; organization_id: string }>(
    em,
    `select w.id, w.outbox_event_id, w.endpoint_id, w.attempts, w.type, e.url, e.organization_id
     from webhook_events w join webhook_endpoints e on e.id = w.endpoint_id
     where w.succeeded is null and w.retry_started_at is null and w.attempts >= 1
       and coalesce(w.modified_at, w.created_at) < now() - make_interval(secs => $1)
     order by w.created_at limit 100`,
    [s.sweepGraceSeconds],
  );
  const started: string[] = [];
  for (const r of lost) {
    log.warn({ webhookEventId: r.id, endpointId: r.endpoint_id }, 'webhook event had no retry workflow; starting it');
    const ok = await startRetries(
      temporal,
      cfg,
      s.taskQueue,
      { webhookEventId: r.id, outboxEventId: r.outbox_event_id, endpointId: r.endpoint_id, firstAttempt: r.attempts + 1, organizationId: r.organization_id, url: r.url, eventType: r.type },
      { log },
    );
    if (ok) started.push(r.id);
  }
  await markRetriesStarted(em, started);
  return started.length;
}

/**
 * One attempt of a retry workflow. A missing event is an error (the workflow fails visibly), never a
 * quiet success; an endpoint disabled or deleted meanwhile records a 'not sent' attempt and ends the event.
 */
export async function deliverAttempt(
  em: EntityManager,
  cfg: Config,
  webhookEventId: string,
  attempt: number,
  final: boolean,
): Promise<{ outcome: 'delivered' | 'failed' | 'skipped'; httpCode: number | null }> {
  const we = await em.findOne(WebhookEvent, { id: webhookEventId }, { populate: ['endpoint'] });
  if (!we) throw new WebhookEventMissing(webhookEventId);
  const started = Date.now();
  let result: { httpCode: number | null; summary: string };
  const skipped = !we.endpoint.enabled || !!we.endpoint.deletedAt;
  if (skipped) result = { httpCode: null, summary: 'not sent: the endpoint is disabled' };
  else {
    result = await sendWebhook({
      url: we.endpoint.url,
      headers: webhookHeaders(endpointSecret(cfg, we.endpoint), we.id, we.payload),
      body: we.payload,
      timeoutMs: cfg.WEBHOOK_TIMEOUT_MS,
      allowPrivate: webhookAllowsPrivateUrls(cfg),
    });
  }
  const ok = result.httpCode !== null && result.httpCode >= 200 && result.httpCode < 300;
  em.create(WebhookDelivery, {
    webhookEvent: we,
    attempt,
    succeeded: ok,
    httpCode: result.httpCode,
    response: result.summary,
    durationMs: Date.now() - started,
  });
  we.attempts = Math.max(we.attempts, attempt);
  we.lastHttpCode = result.httpCode;
  if (ok) we.succeeded = true;
  else if (final || skipped) we.succeeded = false;
  await em.flush();
  return { outcome: ok ? 'delivered' : skipped ? 'skipped' : 'failed', httpCode: result.httpCode };
}

export class WebhookEventMissing extends Error {
  constructor(id: string) {
    super(`webhook event ${id} does not exist`);
    this.name = 'WebhookEventMissing';
  }
}

/**
 * After an event's last attempt failed: marks it failed, logs it, and disables the endpoint when its
 * last `WEBHOOK_DISABLE_AFTER` events all failed (mailing the organization's members, after commit).
 */
export async function webhookEventFailed(em: EntityManager, cfg: Config, log: Logger, webhookEventId: string, disableAfter = cfg.WEBHOOK_DISABLE_AFTER) {
  const we = await em.findOne(WebhookEvent, { id: webhookEventId }, { populate: ['endpoint', 'endpoint.organization'] });
  if (!we) return { disabled: false, mails: [] as { to: string; subject: string; text: string; dedupeKey: string; organizationId: string }[] };
  if (we.succeeded === null) {
    we.succeeded = false;
    await em.flush();
  }
  log.warn({ webhookEventId, endpointId: we.endpoint.id, type: we.type, attempts: we.attempts, lastHttpCode: we.lastHttpCode }, 'webhook event gave up after its last attempt');
  const endpoint = we.endpoint;
  const none = { disabled: false, mails: [] };
  if (!endpoint.enabled) return none;
  const recent = await em.find(WebhookEvent, { endpoint, succeeded: { $ne: null } }, { orderBy: { createdAt: 'desc' }, limit: disableAfter });
  if (recent.length < disableAfter || recent.some((e) => e.succeeded)) return none;
  const disabledAt = new Date();
  const updated = await em.nativeUpdate(WebhookEndpoint, { id: endpoint.id, enabled: true }, { enabled: false, disabledAt });
  if (!updated) return none;
  log.warn({ endpointId: endpoint.id, organizationId: endpoint.organization.id }, 'webhook endpoint disabled after its last events all failed');
  const members = await em.find(Member, { organization: endpoint.organization }, { populate: ['user'] });
  const subject = `Webhook endpoint disabled in ${endpoint.organization.name}`;
  const text =
    `The webhook endpoint ${endpoint.url} failed its last ${disableAfter} events and has been disabled.\n` +
    `Fix the receiver, then re-enable it (PATCH /v1/webhooks/endpoints/${endpoint.id} {"enabled": true}) and ` +
    `redeliver the failed events (POST /v1/webhooks/events/{id}/redeliver).\n`;
  return {
    disabled: true,
    mails: members.map((m) => ({
      to: m.user.email,
      subject,
      text,
      organizationId: endpoint.organization.id,
      dedupeKey: `webhook-endpoint-disabled:${endpoint.id}:${disabledAt.toISOString()}:${m.user.email}`,
    })),
  };
}

/** Sends the 'endpoint disabled' mails (outside any transaction) and records each as a notification. */
export async function sendEndpointDisabledMails(
  em: EntityManager,
  mailer: { send(m: { to: string; subject: string; text: string }): Promise<{ messageId: string | null }> },
  mails: { to: string; subject: string; text: string; dedupeKey: string; organizationId: string }[],
) {
  for (const m of mails) {
    const { messageId } = await mailer.send({ to: m.to, subject: m.subject, text: m.text });
    em.create(Notification, {
      organizationId: m.organizationId,
      kind: 'webhook_endpoint.disabled',
      dedupeKey: m.dedupeKey,
      recipient: m.to,
      subject: m.subject,
      messageId,
      sentAt: new Date(),
    });
  }
  await em.flush();
}

/** What /healthz reports: outbox events not fanned out and webhook events never attempted, 5 minutes after they were written. */
export async function webhookBacklog(em: EntityManager): Promise<{ undispatched_events: number; unattempted_deliveries: number }> {
  const { rows } = await runSql<{ undispatched: string; unattempted: string }>(
    em,
    `select
       (select count(*) from outbox_events where dispatched_at is null and created_at < now() - interval '5 minutes') as undispatched,
       (select count(*) from webhook_events where succeeded is null and retry_started_at is null and attempts = 0
          and created_at < now() - interval '5 minutes') as unattempted`,
  );
  return { undispatched_events: Number(rows[0]!.undispatched), unattempted_deliveries: Number(rows[0]!.unattempted) };
}

// The worker's activities and the bench read the fan-out through this module.
export { fanOutOutbox, sealSecret } from './fan-out.ts';
export { fanOutOutboxSql } from './fan-out-sql.ts';
