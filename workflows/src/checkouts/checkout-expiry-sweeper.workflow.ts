/**
 * checkout-expiry:<task_queue> — long-lived: marks open checkouts `expired` once their `expires_at`
 * has passed, in batches, for every checkout of the database, and settles the charges whose
 * confirmation died before recording their outcome (checkouts/confirm.ts `settleAbandonedCharges`,
 * at most CHECKOUT_CHARGE_SETTLE_SECONDS after they were made, plus a round). One timer for all checkouts
 * instead of a workflow start, a workflow task and a timer per checkout. Started by the worker at
 * start-up (workers/src/checkout-expiry-sweeper.ts, USE_EXISTING: one per task queue); several
 * sweepers on one database (several task queues) are safe, the batch skips rows another holds.
 *
 * Each round is one local activity (`expireDueCheckouts`, one short idempotent transaction): it expires
 * up to `limit` due open checkouts (earliest first, `checkout.updated` for each) and answers the
 * earliest `expires_at` still open and the database's now(). A full batch means more may be due: the
 * next round runs at once. Otherwise the workflow sleeps until that earliest `expires_at`, but:
 *
 * - never longer than the checkout TTL (CHECKOUT_TTL_SECONDS, reported by the activity from the
 *   worker's config). No signal from the API is needed: every checkout is created with
 *   expires_at = created_at + TTL, so a checkout the activity did not see (created after its query)
 *   expires no earlier than TTL after that query, and waking after at most TTL is never late for it.
 *   The only slack is a creating transaction that set created_at before the query and committed after
 *   it: its checkout is expired by the next round (late by that transaction's duration, milliseconds).
 *   This relies on the API and the worker sharing CHECKOUT_TTL_SECONDS; with a longer TTL in the
 *   worker than in the API, expiry can be late (never early).
 * - never shorter than `minSleepMs` (1 s): checkouts that fall due within a second of each other are
 *   expired by one round instead of a round each, and a due checkout whose row another transaction
 *   holds (skipped by the batch) is retried a second later rather than in a busy loop.
 *
 * So a checkout is marked expired within about a second of its `expires_at`. The read paths do not
 * depend on it: an open checkout past `expires_at` already reads as `expired` and is refused by its
 * client secret (`effectiveStatus`). Continues as new after `maxIterations` rounds to bound its history.
 */
import { continueAsNew, proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { CheckoutActivities, CheckoutExpirySweeperInput } from './contract.ts';

const { expireDueCheckouts } = proxyLocalActivities<CheckoutActivities>({
  startToCloseTimeout: '1 minute',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds' },
});

export async function checkoutExpirySweeperWorkflow(input: CheckoutExpirySweeperInput = {}): Promise<void> {
  const limit = input.limit ?? 200;
  const minSleepMs = input.minSleepMs ?? 1000;
  for (let i = 0; i < (input.maxIterations ?? 500); i++) {
    const round = await expireDueCheckouts({ limit });
    if (round.expired >= limit) continue;
    const ttlMs = round.ttlSeconds * 1000;
    const untilNext = round.nextExpiresAt === null ? ttlMs : Date.parse(round.nextExpiresAt) - Date.parse(round.now);
    // Abandoned charges: the oldest unsettled one's due time; an attempt made while this round slept
    // falls due no earlier than the grace period after it, so that also caps the sleep.
    const graceMs = round.chargeSettleSeconds ? round.chargeSettleSeconds * 1000 : Infinity;
    const untilCharge = round.nextChargeDueAt ? Date.parse(round.nextChargeDueAt) - Date.parse(round.now) : Infinity;
    await sleep(Math.max(minSleepMs, Math.min(untilNext, ttlMs, untilCharge, graceMs)));
  }
  await continueAsNew<typeof checkoutExpirySweeperWorkflow>(input);
}
