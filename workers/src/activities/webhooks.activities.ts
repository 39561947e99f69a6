/** Webhook activities: fan-out of the outbox, one signed HTTP attempt, endpoint health. */
import { activityInfo } from '@temporalio/activity';
import type { Deps } from '@emporia/api/src/deps.ts';
import { Member } from '@emporia/api/src/modules/organizations/entities.ts';
import { Notification } from '@emporia/api/src/modules/notifications/entities.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from '@emporia/api/src/modules/webhooks/entities.ts';
import { dispatchOutbox, endpointSecret } from '@emporia/api/src/modules/webhooks/service.ts';
import { webhookHeaders } from '@emporia/api/src/modules/webhooks/signing.ts';

const DISPATCH_BATCH = 100;

export function createWebhookActivities(deps: Deps) {
  const { orm, cfg, temporal, mailer } = deps;
  return {
    async dispatchOutbox(): Promise<{ dispatched: number; full: boolean }> {
      const n = await dispatchOutbox(orm.em.fork(), temporal, cfg, activityInfo().taskQueue, DISPATCH_BATCH);
      return { dispatched: n, full: n === DISPATCH_BATCH };
    },

    /** One attempt. Never throws for an HTTP failure: the workflow owns the retry schedule. */
    async deliverWebhook({ webhookEventId, attempt, final }: { webhookEventId: string; attempt: number; final: boolean }) {
      const em = orm.em.fork();
      const we = await em.findOne(WebhookEvent, { id: webhookEventId }, { populate: ['endpoint'] });
      if (!we || !we.endpoint.enabled || we.endpoint.deletedAt) return { outcome: 'skipped' as const };
      const secret = endpointSecret(cfg, we.endpoint);
      const started = Date.now();
      let httpCode: number | null = null;
      let response: string | null = null;
      try {
        const res = await fetch(we.endpoint.url, {
          method: 'POST',
          headers: webhookHeaders(secret, we.id, we.payload),
          body: we.payload,
          redirect: 'manual',
          signal: AbortSignal.timeout(cfg.WEBHOOK_TIMEOUT_MS),
        });
        httpCode = res.status;
        response = (await res.text()).slice(0, 2048);
      } catch (err) {
        response = `${(err as Error).name}: ${(err as Error).message}`.slice(0, 2048);
      }
      const ok = httpCode !== null && httpCode >= 200 && httpCode < 300;
      em.create(WebhookDelivery, {
        webhookEvent: we,
        attempt,
        succeeded: ok,
        httpCode,
        response,
        durationMs: Date.now() - started,
      });
      we.attempts = Math.max(we.attempts, attempt);
      we.lastHttpCode = httpCode;
      if (ok) we.succeeded = true;
      else if (final) we.succeeded = false;
      await em.flush();
      return { outcome: ok ? ('delivered' as const) : ('failed' as const), httpCode };
    },

    /** After an event finally failed: disable the endpoint when its last N events all failed, and tell the members. */
    async webhookEventFailed({ webhookEventId, disableAfter }: { webhookEventId: string; disableAfter: number }) {
      const em = orm.em.fork();
      const we = await em.findOne(WebhookEvent, { id: webhookEventId }, { populate: ['endpoint', 'endpoint.organization'] });
      if (!we) return { disabled: false };
      if (we.succeeded === null) {
        we.succeeded = false;
        await em.flush();
      }
      const endpoint = we.endpoint;
      if (!endpoint.enabled) return { disabled: false };
      const recent = await em.find(
        WebhookEvent,
        { endpoint, succeeded: { $ne: null } },
        { orderBy: { createdAt: 'desc' }, limit: disableAfter },
      );
      if (recent.length < disableAfter || recent.some((e) => e.succeeded)) return { disabled: false };
      const disabledAt = new Date();
      const updated = await em.nativeUpdate(WebhookEndpoint, { id: endpoint.id, enabled: true }, { enabled: false, disabledAt });
      if (!updated) return { disabled: false };
      const members = await em.find(Member, { organization: endpoint.organization }, { populate: ['user'] });
      for (const m of members) {
        const dedupeKey = `webhook-endpoint-disabled:${endpoint.id}:${disabledAt.toISOString()}:${m.user.email}`;
        const subject = `Webhook endpoint disabled in ${endpoint.organization.name}`;
        const { messageId } = await mailer.send({
          to: m.user.email,
          subject,
          text:
            `The webhook endpoint ${endpoint.url} failed its last ${disableAfter} events and has been disabled.\n` +
            `Fix the receiver, then re-enable it (PATCH /v1/webhooks/endpoints/${endpoint.id} {"enabled": true}) and ` +
            `redeliver the failed events (POST /v1/webhooks/events/{id}/redeliver).\n`,
        });
        em.create(Notification, {
          organizationId: endpoint.organization.id,
          kind: 'webhook_endpoint.disabled',
          dedupeKey,
          recipient: m.user.email,
          subject,
          messageId,
          sentAt: new Date(),
        });
      }
      await em.flush();
      return { disabled: true };
    },
  };
}

export type WebhookActivities = ReturnType<typeof createWebhookActivities>;
