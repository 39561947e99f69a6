/**
 * checkout-confirm:<checkout_id> — fulfils a confirmed (already charged) checkout: one transaction
 * saves the payment method, creates the order (and the subscription for a recurring product), grants
 * the benefits that need no third party and marks the checkout succeeded (orders/fulfilment.ts
 * `fulfilCheckout`); GitHub and Discord benefits are then requested from their benefit-grant
 * workflows before the checkout is marked succeeded; then the subscription's lifecycle starts and the
 * receipt is mailed. Each step is an idempotent activity, so retries and replays never duplicate anything.
 *
 * A saga: if the fulfilment transaction fails for good (its retries exhausted), nothing of it was
 * written; the compensation refunds the charge, releases the discount redemption and puts the checkout
 * back to `open` so the buyer may pay again, and the workflow fails. Once that transaction has
 * committed the sale stands (the buyer has their order and benefits): the steps after it are retried
 * until they succeed and never refund (`untilDone`). The receipt comes last and never triggers a refund.
 *
 * The steps are short database transactions, so they run as local activities (issue #5): the whole
 * fulfilment is one workflow task instead of a server round trip per step. A worker that dies midway
 * leaves the task unanswered; it is retried after its timeout and replays every step from the first,
 * each a no-op once done. (Nothing signals this workflow, so the task running the steps is not
 * rejected for new events, which would re-run them too; at most a child subscription that ended at
 * once can do that to the later receipt task, whose mail is deduplicated. The benefit-grant workflow,
 * which is signalled, keeps activity tasks for that reason.)
 *
 * Runs recorded before these changes replay as they ran: before 'checkout-confirm-local-steps' the
 * steps were activity tasks; before 'checkout-fulfil-one-transaction' each step was its own
 * transaction and every benefit went through its benefit-grant workflow.
 */
import { log, patched, proxyActivities, proxyLocalActivities, sleep, workflowInfo } from '@temporalio/workflow';
import type { CheckoutConfirmActivities } from '../../../workers/src/activities/checkout-confirm.activities.ts';
import type { NotificationActivities } from '../../../workers/src/activities/notifications.activities.ts';
import type { Receipt } from '../../../api/src/modules/orders/fulfilment.ts';
import { startSubscriptionLifecycle } from '../subscriptions/start.ts';
import type { RunMetadata } from '../metadata.ts';

const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 10 };
// Each step is one short transaction; a worker that crashed mid-step is noticed (and the step retried
// elsewhere) only when this timeout passes, so it stays short (tests/crash).
const remoteSteps = proxyActivities<CheckoutConfirmActivities>({ startToCloseTimeout: '15 seconds', retry });
const remoteNotifications = proxyActivities<NotificationActivities>({ startToCloseTimeout: '30 seconds', retry });
const localSteps = proxyLocalActivities<CheckoutConfirmActivities>({ startToCloseTimeout: '15 seconds', localRetryThreshold: '10 seconds', retry });
const localNotifications = proxyLocalActivities<NotificationActivities>({ startToCloseTimeout: '30 seconds', localRetryThreshold: '10 seconds', retry });

export interface CheckoutConfirmInput {
  checkoutId: string;
}

export interface CheckoutConfirmResult {
  status: 'succeeded' | 'failed' | 'skipped';
  orderId: string | null;
  subscriptionId: string | null;
  grantsPending: number;
}

export async function checkoutConfirmWorkflow({ checkoutId }: CheckoutConfirmInput): Promise<CheckoutConfirmResult> {
  const local = patched('checkout-confirm-local-steps');
  const steps = local ? localSteps : remoteSteps;
  const notifications = local ? localNotifications : remoteNotifications;
  const compensations: (() => Promise<unknown>)[] = [];
  let result: CheckoutConfirmResult;
  if (local && patched('checkout-fulfil-one-transaction')) {
    let receipt;
    let subscriptionRun: RunMetadata | null | undefined;
    if (patched('checkout-sale-stands-after-fulfil')) {
      let done;
      try {
        // The charge happened at confirmation: until the fulfilment commits, a permanent failure must give the money back.
        done = await localSteps.fulfilStep(checkoutId);
      } catch (err) {
        log.error('checkout fulfilment failed; compensating', { checkoutId, error: String(err) });
        await localSteps.compensateCheckout.executeWithOptions({ summary: 'Compensate: refund the charge at the payment processor, reopen the checkout' }, [checkoutId]);
        throw err;
      }
      if (!done) return { status: 'skipped', orderId: null, subscriptionId: null, grantsPending: 0 };
      // Committed: the order (and subscription, and first-party grants) exist, so the sale stands. What
      // is left only finishes it (queue the third-party grants, mark the checkout succeeded); a step
      // that fails, even for good, is retried until it succeeds, never answered with a refund.
      if (!done.succeeded) {
        const scope = done;
        if (scope.externalBenefitIds.length || scope.externalRevokeBenefitIds?.length) await untilDone('requestGrantsStep', checkoutId, () => localSteps.requestGrantsStep(checkoutId, scope));
        await untilDone('markSucceededStep', checkoutId, () => localSteps.markSucceededStep(checkoutId));
      }
      receipt = done.receipt;
      subscriptionRun = done.subscriptionRun;
      result = { status: 'succeeded', orderId: done.orderId, subscriptionId: done.subscriptionId, grantsPending: done.externalBenefitIds.length };
    } else {
      // Runs recorded before 'checkout-sale-stands-after-fulfil' (replay only): any failure refunded.
      try {
        compensations.push(() => localSteps.compensateCheckout(checkoutId));
        const done = await localSteps.fulfilStep(checkoutId);
        if (!done) return { status: 'skipped', orderId: null, subscriptionId: null, grantsPending: 0 };
        if (!done.succeeded) {
          if (done.externalBenefitIds.length) await localSteps.requestGrantsStep(checkoutId, done);
          await localSteps.markSucceededStep(checkoutId);
        }
        receipt = done.receipt;
        result = { status: 'succeeded', orderId: done.orderId, subscriptionId: done.subscriptionId, grantsPending: done.externalBenefitIds.length };
      } catch (err) {
        log.error('checkout fulfilment failed; compensating', { checkoutId, error: String(err) });
        for (const undo of compensations.reverse()) await undo();
        throw err;
      }
    }
    if (result.subscriptionId) await startSubscriptionLifecycle(result.subscriptionId, subscriptionRun);
    if (receipt) await sendReceipt(notifications, receipt);
    return result;
  }

  try {
    // The charge happened at confirmation: from here on, a permanent failure must give the money back.
    compensations.push(() => steps.compensateCheckout(checkoutId));
    await steps.savePaymentMethodStep(checkoutId);
    const order = await steps.createOrderStep(checkoutId);
    if (!order) return { status: 'skipped', orderId: null, subscriptionId: null, grantsPending: 0 };
    const grants = await steps.grantBenefitsStep(checkoutId, order);
    await steps.markSucceededStep(checkoutId);
    result = { status: 'succeeded', orderId: order.orderId, subscriptionId: order.subscriptionId, grantsPending: grants.pending };
  } catch (err) {
    log.error('checkout fulfilment failed; compensating', { checkoutId, error: String(err) });
    for (const undo of compensations.reverse()) await undo();
    throw err;
  }

  if (result.subscriptionId) await startSubscriptionLifecycle(result.subscriptionId);

  const receipt = await steps.receiptStep(checkoutId);
  if (receipt) await sendReceipt(notifications, receipt);
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

/** Mails the receipt once (deduplicated by the workflow id); a mail that cannot be sent is logged, not fatal. */
async function sendReceipt(notifications: typeof localNotifications, receipt: Receipt): Promise<void> {
  try {
    await notifications.sendNotification.executeWithOptions({ summary: `Mail the receipt to ${receipt.recipient} (SMTP)` }, [
      { dedupeKey: `${workflowInfo().workflowId}:receipt`, kind: 'order.receipt', ...receipt },
    ]);
  } catch (err) {
    log.warn('receipt not sent', { checkoutId: workflowInfo().workflowId, error: String(err) });
  }
}
