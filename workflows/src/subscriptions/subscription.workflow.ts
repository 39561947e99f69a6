/**
 * subscription:<subscription_id> — the life of one subscription, started when the checkout creates it.
 *
 * Sleeps until `current_period_end`, then either ends it (set to cancel at period end → `canceled`,
 * benefits revoked) or renews it: the period rolls, expired discounts drop, a `subscription_cycle`
 * order is charged off-session and the product's benefits are granted again for the new cycle.
 * A renewal's database step is one local activity (no task round trip) that also answers the next
 * period's end, so a period costs one workflow task and one local activity, and the run goes on to the
 * next period; it continues as new when Temporal suggests it or its history passes `MAX_RUN_HISTORY`
 * events (a run's history stays bounded), and after a renewal that an update or a schedule change
 * came in during (the new run reads the schedule). Runs recorded before this (every paid renewal
 * continued as new) replay unchanged: the choice is behind `patched('renewal-stays-in-run')`.
 *
 * A declined renewal makes it `past_due` and starts dunning: retries after `dunningDelaysMs` (2, 5, 7
 * and 7 days by default), a mail with a link to update the card after each failure. A retry that
 * succeeds returns it to `active`; exhaustion makes it `unpaid` and revokes the benefits after the
 * organization's grace period. The final usage order of a subscription that ended (set to cancel, or
 * revoked) is charged as it ends; a decline is dunned the same way after the run's end, with no status
 * change (`patched('final-usage-dunning')`: runs recorded before left it pending).
 *
 * Seller and customer actions arrive as updates (validated, answered). The workflow is the single
 * writer of subscription state: each handler runs one activity that re-checks the rules under the
 * row lock and writes the change with its webhook events. Handlers and the period-end step take turns
 * (one at a time); dunning waits do not block them.
 *
 * Its `SubscriptionStatus` search attribute follows the subscription's status, so a visibility query
 * finds e.g. an organization's past-due subscriptions; only in runs started with the platform's
 * search attributes (they are registered then).
 */
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  sleep,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { BenefitActivities } from '../benefits/contract.ts';
import type { NotificationActivities } from '../notifications/contract.ts';
import type { CancelArgs, SubscriptionActivities, SubscriptionWorkflowInput } from './contract.ts';
import { refusalOf, type SubscriptionRuleState, type SubscriptionUpdateName } from './rules.ts';
import { cancelUpdate, changeProductUpdate, refusalFailure, revokeUpdate, uncancelUpdate } from './updates.ts';
import { SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL } from '../ids.ts';
import { SEARCH_ATTRIBUTES } from '../metadata.ts';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' };
const acts = proxyActivities<SubscriptionActivities>({ startToCloseTimeout: '1 minute', retry });
/** The short database steps of a period (renew + first charge; the schedule read at a run's start) run as local activities: no task round trips. */
const local = proxyLocalActivities<SubscriptionActivities>({ startToCloseTimeout: '1 minute', localRetryThreshold: '10 seconds', retry });
const benefits = proxyActivities<BenefitActivities>({ startToCloseTimeout: '1 minute', retry });
const notifications = proxyActivities<NotificationActivities>({ startToCloseTimeout: '30 seconds', retry: { ...retry, maximumAttempts: 10 } });

const DAY = 24 * 60 * 60 * 1000;
/** Runs recorded under 'renewal-stays-in-run' continued as new after the renewal that took their history past this. */
export const MAX_RUN_HISTORY = 500;
export const DEFAULT_DUNNING_DELAYS_MS = [2 * DAY, 5 * DAY, 7 * DAY, 7 * DAY];

export const scheduleChangedSignal = defineSignal(SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL);
export const subscriptionStateQuery = defineQuery<{ phase: string; dunningAttempt: number }>('subscriptionState');

const REASONS = new Set(['customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other']);
function validateCancelArgs(a: CancelArgs | undefined) {
  if (!a || typeof a !== 'object') throw new Error('cancel arguments required');
  if (a.reason != null && !REASONS.has(a.reason)) throw new Error(`unknown cancellation reason ${a.reason}`);
  if (a.comment != null && typeof a.comment !== 'string') throw new Error('comment must be a string');
}

/** A refusal from the activity (a product change's product checks, a row gone) becomes the update's failure, not the workflow's. */
async function answer<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure) {
      throw ApplicationFailure.create({
        message: err.cause.message,
        type: err.cause.type ?? undefined,
        nonRetryable: true,
        details: err.cause.details ?? undefined,
      });
    }
    throw err;
  }
}

type Renewal = Awaited<ReturnType<SubscriptionActivities['renewAndCharge']>>;
type SubscriptionSchedule = NonNullable<Awaited<ReturnType<SubscriptionActivities['subscriptionSchedule']>>>;

const iso = (ms: number) => new Date(ms).toISOString();

export async function subscriptionWorkflow(input: SubscriptionWorkflowInput): Promise<{ outcome: 'ended' | 'missing' }> {
  const id = input.subscriptionId;
  const delays = input.dunningDelaysMs ?? DEFAULT_DUNNING_DELAYS_MS;
  let busy = false;
  let wake = false;
  let ended = false;
  let phase = 'waiting';
  let dunningAttempt = 0;
  /** A subscription's final usage order whose first charge was declined: dunned once the subscription has ended. */
  let finalDue: { orderId: string; reason: string | null } | null = null;
  /** What the update rules read (updates.ts): from the last schedule read and the steps since; null before the first read. */
  let state: SubscriptionRuleState | null = null;
  /** An update's validator: refused by its rule on the state held (before the first read, the handler decides). */
  const allowed = (update: SubscriptionUpdateName) => {
    const r = state && refusalOf(update, state);
    if (r) throw refusalFailure(r);
  };
  /** The same rule in the handler, its turn come: an earlier update may have changed the state since validation. */
  const stillAllowed = async (update: SubscriptionUpdateName) => {
    await condition(() => state !== null);
    const r = refusalOf(update, state!);
    if (r) throw refusalFailure(r);
  };
  const tracksStatus =
    workflowInfo().typedSearchAttributes.get(SEARCH_ATTRIBUTES.organizationId) !== undefined;
  /** Keeps the SubscriptionStatus search attribute equal to the status the last step left the subscription in. */
  const showStatus = (status: string | null | undefined) => {
    if (state && status) state.status = status;
    if (!tracksStatus || !status || workflowInfo().typedSearchAttributes.get(SEARCH_ATTRIBUTES.subscriptionStatus) === status) return;
    upsertSearchAttributes([{ key: SEARCH_ATTRIBUTES.subscriptionStatus, value: status }]);
  };
  // What the run is waiting for, on its page in the Temporal UI ("current details"; no history event).
  // Runs after a continue-as-new have no static summary (the SDK cannot carry it over): this says it.
  const nowDoing = (text: string) => setCurrentDetails(`Subscription \`${id}\`: ${text}`);

  async function exclusive<T>(fn: () => Promise<T>): Promise<T> {
    await condition(() => !busy);
    busy = true;
    try {
      return await fn();
    } finally {
      busy = false;
    }
  }

  setHandler(subscriptionStateQuery, () => ({ phase, dunningAttempt }));
  // An upgrade checkout moved the period (orders/fulfilment.ts): wait for the new end instead.
  setHandler(scheduleChangedSignal, () => {
    wake = true;
  });

  setHandler(
    cancelUpdate,
    (args) =>
      exclusive(async () => {
        await stillAllowed('cancel');
        const r = await answer(() => acts.cancelSubscription(id, args, iso(Date.now())));
        state!.cancelAtPeriodEnd = true;
        wake = true;
        showStatus(r.status);
        return { subscriptionId: r.subscriptionId, status: r.status };
      }),
    {
      validator: (args) => {
        validateCancelArgs(args);
        allowed('cancel');
      },
    },
  );

  setHandler(
    uncancelUpdate,
    () =>
      exclusive(async () => {
        await stillAllowed('uncancel');
        const r = await answer(() => acts.uncancelSubscription(id));
        state!.cancelAtPeriodEnd = false;
        wake = true;
        showStatus(r.status);
        return { subscriptionId: r.subscriptionId, status: r.status };
      }),
    { validator: () => allowed('uncancel') },
  );

  setHandler(
    revokeUpdate,
    (args) =>
      exclusive(async () => {
        await stillAllowed('revoke');
        const r = await answer(() => acts.revokeSubscription(id, args, iso(Date.now())));
        ended = true;
        state!.ended = true;
        showStatus(r.status);
        // The unfinished period's metered usage: charged now; a decline is dunned after the run's end.
        if (r.finalOrderId) {
          const c = await acts.chargeSubscriptionOrder.executeWithOptions({ summary: 'Charge the final usage to the saved card (payment processor)' }, [r.finalOrderId, 0]);
          if (!c.paid) finalDue = { orderId: r.finalOrderId, reason: c.message };
        }
        await benefits.requestBenefitAction('revoke', r.scope);
        return { subscriptionId: r.subscriptionId, status: r.status };
      }),
    {
      validator: (args) => {
        validateCancelArgs(args);
        allowed('revoke');
      },
    },
  );

  setHandler(
    changeProductUpdate,
    (args) =>
      exclusive(async () => {
        await stillAllowed('changeProduct');
        const r = await answer(() => acts.changeSubscriptionProduct(id, args, iso(Date.now())));
        let paid: boolean | null = null;
        if (r.orderId) {
          const orderId = r.orderId;
          paid = (await acts.chargeSubscriptionOrder.executeWithOptions({ summary: 'Charge the plan change to the saved card (payment processor)' }, [orderId, 0])).paid;
        }
        showStatus(r.status);
        if (r.previousProductId && r.previousProductId !== r.scope.productId) {
          await benefits.requestBenefitAction('revoke', { ...r.scope, productId: r.previousProductId });
          await benefits.requestBenefitAction('grant', r.scope);
        }
        wake = true;
        return { subscriptionId: r.subscriptionId, status: r.status, orderId: r.orderId, paid };
      }),
    {
      validator: (a) => {
        if (!a || typeof a.productId !== 'string') throw new Error('productId required');
        if (a.prorationBehavior != null && a.prorationBehavior !== 'invoice' && a.prorationBehavior !== 'prorate') {
          throw new Error('prorationBehavior must be invoice or prorate');
        }
        allowed('changeProduct');
      },
    },
  );

  /** The dunning notice before retry `attempt` (a retry date), or after the last one (null). */
  async function mailNotice(orderId: string, attempt: number, nextRetryAt: string | null, reason: string | null): Promise<void> {
    const mail = await acts.subscriptionDunningMail(orderId, attempt, nextRetryAt, reason);
    if (!mail) return;
    if (nextRetryAt) {
      await notifications.sendNotification.executeWithOptions({ summary: `Mail dunning notice #${attempt} (SMTP)` }, [
        { dedupeKey: `subscription:${id}:order:${orderId}:dunning:${attempt}`, kind: 'subscription.dunning', ...mail },
      ]);
    } else {
      await notifications.sendNotification({ dedupeKey: `subscription:${id}:order:${orderId}:unpaid`, kind: 'subscription.unpaid', ...mail });
    }
  }

  /** Dunning for a declined cycle order: answers whether it was paid in the end. */
  async function dun(orderId: string, firstFailure: string | null): Promise<boolean> {
    let reason = firstFailure;
    for (let i = 0; i < delays.length; i++) {
      dunningAttempt = i + 1;
      const nextRetryAt = iso(Date.now() + delays[i]!);
      await mailNotice(orderId, i + 1, nextRetryAt, reason);
      phase = 'past_due';
      nowDoing(`past due; dunning retry #${i + 1} of ${delays.length} at ${nextRetryAt}`);
      await condition(() => ended, delays[i]!);
      if (ended) return false;
      const r = await exclusive(() =>
        ended
          ? Promise.resolve({ paid: false, message: null })
          : acts.chargeSubscriptionOrder.executeWithOptions({ summary: `Dunning retry #${i + 1}: charge the saved card (payment processor)` }, [orderId, i + 1]),
      );
      if (ended) return false;
      if (r.paid) {
        showStatus('active');
        return true;
      }
      reason = r.message;
    }
    await mailNotice(orderId, delays.length + 1, null, reason);
    return false;
  }

  /**
   * Dunning for the declined final usage order of a subscription that has ended: the same notices and
   * retries, no status change (the subscription stays ended); the order stays pending if none pays.
   */
  async function dunFinal(orderId: string, firstFailure: string | null): Promise<void> {
    let reason = firstFailure;
    phase = 'final_payment_due';
    for (let i = 0; i < delays.length; i++) {
      dunningAttempt = i + 1;
      const nextRetryAt = iso(Date.now() + delays[i]!);
      await mailNotice(orderId, i + 1, nextRetryAt, reason);
      nowDoing(`ended; final usage order \`${orderId}\` declined, retry #${i + 1} of ${delays.length} at ${nextRetryAt}`);
      await sleep(delays[i]!);
      const r = await acts.chargeSubscriptionOrder.executeWithOptions({ summary: `Final usage retry #${i + 1}: charge the saved card (payment processor)` }, [orderId, i + 1]);
      if (r.paid) return;
      reason = r.message;
    }
    await mailNotice(orderId, delays.length + 1, null, reason);
  }

  /** The next period's schedule as the last renewal answered it (no read then), with the grace days last read. */
  let carried: (SubscriptionSchedule & { read: false }) | null = null;
  for (;;) {
    const schedule: (SubscriptionSchedule & { read?: false }) | null = carried ?? (await local.subscriptionSchedule(id));
    carried = null;
    if (!schedule) return { outcome: 'missing' };
    state = { status: schedule.status, ended: schedule.ended, cancelAtPeriodEnd: schedule.cancelAtPeriodEnd };
    showStatus(schedule.status);
    if (schedule.ended || ended || !schedule.currentPeriodEnd) break;
    phase = 'waiting';
    nowDoing(`${schedule.status}; ${schedule.cancelAtPeriodEnd ? 'ends' : 'renews'} at ${schedule.currentPeriodEnd}`);
    const end = Date.parse(schedule.currentPeriodEnd);
    wake = false;
    const woken = await condition(() => wake || ended, Math.max(end - Date.now(), 1));
    if (ended) break;
    if (woken) continue;

    phase = 'renewing';
    const r: Renewal = await exclusive<Renewal>(() =>
      ended
        ? Promise.resolve({ outcome: 'stale' as const, paid: false, message: null })
        : local.renewAndCharge.executeWithOptions({ summary: 'Renew the period and charge the saved card (payment processor)' }, [id, schedule.currentPeriodEnd!]),
    );
    if (r.outcome === 'stale') continue;
    if (r.outcome === 'ended') {
      showStatus('canceled');
      if (r.orderId && !r.paid) finalDue = { orderId: r.orderId, reason: r.message };
      await benefits.requestBenefitAction('revoke', r.scope);
      break;
    }
    let paid = r.paid;
    // A declined renewal leaves an active or trialing subscription past_due (chargeSubscriptionOrder).
    if (!paid && (schedule.status === 'active' || schedule.status === 'trialing')) showStatus('past_due');
    if (!paid) paid = await dun(r.orderId, r.message);
    if (ended) break;
    if (paid) {
      // The new cycle's benefits (license key usage resets, meter credits) are granted for its order.
      if (r.benefits > 0) await benefits.requestBenefitAction('grant', r.scope);
      dunningAttempt = 0;
      if (patched('renewal-stays-in-run')) {
        const info = workflowInfo();
        if (!wake && !ended && !info.continueAsNewSuggested && info.historyLength < MAX_RUN_HISTORY) {
          carried = { status: r.status, ended: false, currentPeriodEnd: r.periodEnd, cancelAtPeriodEnd: false, graceDays: schedule.graceDays, read: false };
          continue;
        }
      }
      // Runs recorded before 'renewal-stays-in-run' continued as new after every paid period.
      await condition(allHandlersFinished);
      if (!busy && !ended) return continueAsNew<typeof subscriptionWorkflow>(input);
      continue;
    }
    // Dunning exhausted: unpaid now; benefits stay through the organization's grace period.
    phase = 'unpaid';
    // A schedule carried over from the last renewal holds the grace days of an earlier read: read them now.
    const graceDays = schedule.read === false ? ((await local.subscriptionSchedule(id))?.graceDays ?? schedule.graceDays) : schedule.graceDays;
    nowDoing(`unpaid after ${delays.length} declined retries; benefits revoked after the grace period (${graceDays} days)`);
    const scope = await exclusive(() => acts.markSubscriptionUnpaid(id, iso(Date.now())));
    if (scope) showStatus('unpaid');
    if (scope) {
      if (graceDays > 0) await condition(() => ended, graceDays * DAY);
      if (!ended) await benefits.requestBenefitAction('revoke', scope);
    }
    ended = true;
    break;
  }
  phase = 'ended';
  nowDoing('ended');
  await condition(allHandlersFinished);
  // Runs recorded before 'final-usage-dunning' left a declined final usage order pending.
  if (finalDue && patched('final-usage-dunning')) {
    await dunFinal(finalDue.orderId, finalDue.reason);
    phase = 'ended';
    nowDoing('ended');
  }
  log.info('subscription workflow finished', { subscriptionId: id });
  return { outcome: 'ended' };
}
