/**
 * checkout-confirm:<checkout_id> — fulfils a confirmed (already charged) checkout: one transaction
 * saves the payment method, creates the order (and the subscription for a recurring product), grants
 * the benefits that need no third party and marks the checkout succeeded (orders/fulfilment.ts
 * `fulfilCheckout`); GitHub and Discord benefits are then requested from their benefit-grant
 * workflows before the checkout is marked succeeded; then the subscription's lifecycle starts. The
 * fulfilment step mails the receipt itself once its transaction has committed; the workflow mails it
 * last, with a local activity of its own, only when the step's answer still carries it (SMTP failed or
 * was slow, or the answer was recorded before the step mailed: such histories replay unchanged, the
 * command follows the recorded answer). Each step is an idempotent activity, so retries and replays
 * never duplicate anything.
 *
 * A saga: if the fulfilment transaction fails for good (its retries exhausted), nothing of it was
 * written; the compensation refunds the charge, releases the discount redemption and puts the checkout
 * back to `open` so the buyer may pay again, and the workflow fails. Once that transaction has
 * committed the sale stands (the buyer has their order and benefits): the steps after it are retried
 * until they succeed and never refund (`untilDone`). The receipt comes last and never triggers a refund.
 *
 * The steps are short database transactions, so they run as local activities: the whole
 * fulfilment is one workflow task instead of a server round trip per step. A worker that dies midway
 * leaves the task unanswered; it is retried after its timeout and replays every step from the first,
 * each a no-op once done. (Nothing signals this workflow, so the task running the steps is not
 * rejected for new events, which would re-run them too; at most a child subscription that ended at
 * once can do that to the later receipt task, whose mail is deduplicated. The benefit-grant workflow,
 * which is signalled, keeps activity tasks for that reason.)
 */
import { log, proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { Receipt } from '../../../api/src/modules/orders/receipt.ts';
import type { NotificationActivities } from '../notifications/contract.ts';
import type { CheckoutConfirmActivities, CheckoutConfirmInput, CheckoutConfirmResult } from './contract.ts';
import { startSubscriptionLifecycle } from '../subscriptions/start.ts';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 };
// Each step is one short transaction; a worker that crashed mid-step is noticed (and the step retried
// elsewhere) only when this timeout passes, so it stays short (tests/crash).
const steps = proxyLocalActivities<CheckoutConfirmActivities>({ startToCloseTimeout: '15 seconds', localRetryThreshold: '10 seconds', retry });
const notifications = proxyLocalActivities<NotificationActivities>({ startToCloseTimeout: '30 seconds', localRetryThreshold: '10 seconds', retry });

export async function checkoutConfirmWorkflow({ checkoutId }: CheckoutConfirmInput): Promise<CheckoutConfirmResult> {
  let done;
  try {
    // The charge happened at confirmation: until the fulfilment commits, a permanent failure must give the money back.
    done = await steps.fulfilStep(checkoutId);
  } catch (err) {
    log.error('checkout fulfilment failed; compensating', { checkoutId, error: String(err) });
    await steps.compensateCheckout.executeWithOptions({ summary: 'Compensate: refund the charge at the payment processor, reopen the checkout' }, [checkoutId]);
    throw err;
  }
  if (!done) return { status: 'skipped', orderId: null, subscriptionId: null, grantsPending: 0 };
  // Committed: the order (and subscription, and first-party grants) exist, so the sale stands. What
  // is left only finishes it (queue the third-party grants, mark the checkout succeeded); a step
  // that fails, even for good, is retried until it succeeds, never answered with a refund.
  if (!done.succeeded) {
    const scope = done;
    if (scope.externalBenefitIds.length || scope.externalRevokeBenefitIds?.length) await untilDone('requestGrantsStep', checkoutId, () => steps.requestGrantsStep(checkoutId, scope));
    await untilDone('markSucceededStep', checkoutId, () => steps.markSucceededStep(checkoutId));
  }
  const result: CheckoutConfirmResult = { status: 'succeeded', orderId: done.orderId, subscriptionId: done.subscriptionId, grantsPending: done.externalBenefitIds.length };
  if (result.subscriptionId) await startSubscriptionLifecycle(result.subscriptionId, done.subscriptionRun);
  if (done.receipt) await sendReceipt(done.receipt);
  return result;
}

/**
 * Runs an idempotent step after the sale has committed until it succeeds: its own retries first, then,
 * once they are used up (or it failed non-retryably, e.g. a bug fixed by a deploy), again after a pause
 * that doubles from 2 seconds up to 10 minutes. The run stays open and visible meanwhile.
 */
async function untilDone(step: string, checkoutId: string, run: () => Promise<unknown>): Promise<void> {
  for (let pause = 2_000; ; pause = Math.min(pause * 2, 600_000)) {
    try {
      await run();
      return;
    } catch (err) {
      log.error('step after the sale failed; retrying', { checkoutId, step, retryInMs: pause, error: String(err) });
      await sleep(pause);
    }
  }
}

/** Mails the receipt the fulfilment step did not (deduplicated by the workflow id); a mail that cannot be sent is logged, not fatal. */
async function sendReceipt(receipt: Receipt): Promise<void> {
  try {
    await notifications.sendNotification.executeWithOptions({ summary: `Mail the receipt to ${receipt.recipient} (SMTP)` }, [
      { dedupeKey: `${workflowInfo().workflowId}:receipt`, kind: 'order.receipt', ...receipt },
    ]);
  } catch (err) {
    log.warn('receipt not sent', { checkoutId: workflowInfo().workflowId, error: String(err) });
  }
}
