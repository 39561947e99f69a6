/** Webhook activities: fan-out of the outbox, first attempts in batches, one retry attempt, endpoint health. */
import { ApplicationFailure, activityInfo } from '@temporalio/activity';
import type { Deps } from '@emporia/api/src/deps.ts';
import type { WebhookActivities } from '@emporia/workflows/contracts';
import {
  deliverAttempt,
  deliverFirstAttempts,
  fanOutOutboxSql,
  sendEndpointDisabledMails,
  webhookEventFailed,
  WebhookEventMissing,
} from '@emporia/api/src/modules/webhooks/service.ts';
import { WEBHOOK_FIRST_ATTEMPT_BATCH as FIRST_ATTEMPT_BATCH } from '@emporia/workflows/ids';
import { faultDelay, faultPoint } from '../fault-injection.ts';

const FAN_OUT_BATCH = 200;

export function createWebhookActivities(deps: Deps): WebhookActivities {
  const { orm, cfg, temporal, mailer, log } = deps;

  const failed = async (webhookEventId: string, disableAfter = cfg.WEBHOOK_DISABLE_AFTER) => {
    const r = await webhookEventFailed(orm.em.fork(), cfg, log, webhookEventId, disableAfter);
    // The endpoint's state is committed; the mails go after it.
    if (r.mails.length) await sendEndpointDisabledMails(orm.em.fork(), mailer, r.mails);
    return { disabled: r.disabled };
  };

  return {
    /** Outbox → webhook events: one statement for unsubscribed events, one transaction for the rest. Sends nothing and starts nothing. */
    async fanOutOutbox(): Promise<{ dispatched: number; created: number; full: boolean }> {
      return fanOutOutboxSql(orm.em.fork(), FAN_OUT_BATCH, () => faultDelay('webhook-fan-out:before-commit'));
    },

    /** First attempts of committed, never-attempted events; failures get a retry workflow after the commit. */
    async deliverFirstAttempts() {
      return deliverFirstAttempts(
        orm.em.fork(),
        temporal,
        cfg,
        log,
        {
          taskQueue: activityInfo().taskQueue,
          limit: FIRST_ATTEMPT_BATCH,
          concurrency: 50,
          leaseSeconds: Math.ceil((2 * cfg.WEBHOOK_TIMEOUT_MS) / 1000) + cfg.WEBHOOK_RECOVERY_SECONDS,
          sweepGraceSeconds: cfg.WEBHOOK_RECOVERY_SECONDS,
        },
        {
          onFinalFailure: (id) => failed(id).then(() => undefined),
          afterSend: () => faultPoint('webhook-first-attempts:before-record'),
          beforeRetryStarts: () => faultPoint('webhook-first-attempts:before-retry-starts'),
        },
      );
    },

    /** One attempt of a retry workflow. Never throws for an HTTP failure: the workflow owns the schedule. */
    async deliverWebhook({ webhookEventId, attempt, final }: { webhookEventId: string; attempt: number; final: boolean }) {
      try {
        return await deliverAttempt(orm.em.fork(), cfg, webhookEventId, attempt, final);
      } catch (err) {
        if (err instanceof WebhookEventMissing) {
          log.error({ webhookEventId, attempt }, 'webhook delivery found no event; failing the workflow');
          throw ApplicationFailure.nonRetryable(err.message, 'WebhookEventMissing');
        }
        throw err;
      }
    },

    /** After an event's last attempt failed: disable the endpoint when its last N events all failed, and tell the members. */
    async webhookEventFailed({ webhookEventId, disableAfter }: { webhookEventId: string; disableAfter: number }) {
      return failed(webhookEventId, disableAfter);
    },
  };
}

export type { WebhookActivities };
