/**
 * The steps of the checkout-confirm workflow. Each is idempotent (keyed by the checkout id and
 * enforced by unique constraints) and runs on its own EntityManager fork; see orders/fulfilment.ts.
 * The fulfilment step also mails the receipt once its transaction has committed (never inside it),
 * so a purchase is one local activity; a mail that fails or is slow is left to the workflow's mail
 * activity, and never fails the step (a failed step would be compensated with a refund).
 */
import type { Deps } from '@emporia/api/src/deps.ts';
import { compensateCheckout } from '@emporia/api/src/modules/orders/compensation.ts';
import {
  fulfilCheckout,
  markCheckoutSucceeded,
  requestExternalGrants,
  type FulfilResult,
} from '@emporia/api/src/modules/orders/fulfilment.ts';
import { subscriptionRunOf } from '@emporia/api/src/modules/subscriptions/workflow-client.ts';
import { checkoutConfirmWorkflowId, SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL, subscriptionWorkflowId } from '@emporia/workflows/ids';
import type { CheckoutConfirmActivities, Fulfilled } from '@emporia/workflows/contracts';
import { faultPoint, withFaultPoints } from '../fault-injection.ts';
import { mailOnce } from './mail-once.ts';

/** Longest the fulfilment step waits for SMTP to accept the receipt before leaving it to the workflow's mail activity. */
const RECEIPT_WAIT_MS = 5_000;

export function createCheckoutConfirmActivities(deps: Deps): CheckoutConfirmActivities {
  const { integrations } = deps;
  const { orm, cfg, mailer } = deps;
  const processor = () => deps.processor;

  /**
   * The receipt of a committed fulfilment, mailed once under the key the workflow's mail activity
   * uses. Answers whether SMTP accepted it in time; a mail still under way after that records its row
   * when it completes, so the workflow's mail activity then usually finds it sent.
   */
  async function mailReceipt(checkoutId: string, result: FulfilResult): Promise<boolean> {
    if (!result.receipt) return false;
    const input = { dedupeKey: `${checkoutConfirmWorkflowId(checkoutId)}:receipt`, kind: 'order.receipt', ...result.receipt };
    const sending = mailOnce(orm, mailer, input, { unsent: result.created === true });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), RECEIPT_WAIT_MS)));
    try {
      if ((await Promise.race([sending, late])) !== 'late') return true;
      sending.catch((err: unknown) => deps.log.warn({ err, checkoutId }, 'receipt not sent (late); the workflow mails it'));
      deps.log.warn({ checkoutId }, 'receipt not accepted by SMTP in time; the workflow mails it');
      return false;
    } catch (err) {
      deps.log.warn({ err, checkoutId }, 'receipt not sent; the workflow mails it');
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The step's answer once the receipt is mailed: without the receipt, which the workflow then does not mail again. */
  async function withReceipt(checkoutId: string, result: Fulfilled): Promise<Fulfilled> {
    return (await mailReceipt(checkoutId, result)) ? { ...result, receipt: null, receiptMailed: true } : result;
  }

  return {
    /** Payment method, order, subscription, first-party grants, checkout succeeded: one transaction. */
    async fulfilStep(checkoutId: string): Promise<Fulfilled | null> {
      const result = await withFaultPoints('fulfilStep', checkoutId, () =>
        fulfilCheckout(orm.em.fork(), integrations, checkoutId, {
          processor: processor().name,
          publicUrl: cfg.PUBLIC_URL,
          beforeCommit: () => faultPoint('fulfilStep:before-commit', checkoutId),
        }),
      );
      if (result?.upgraded && result.subscriptionId) {
        // Without it the lifecycle would wake at the old period's end (and then find the new one), late
        // only when the new interval is shorter. A lifecycle not running yet reads the period when it starts.
        await deps.temporal.workflow
          .getHandle(subscriptionWorkflowId(result.subscriptionId))
          .signal(SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL)
          .catch((err: unknown) => deps.log.warn({ err, subscriptionId: result.subscriptionId }, 'subscription workflow not signalled'));
      }
      // What the subscription's lifecycle run, which this workflow starts next, shows and is found by.
      if (result?.subscriptionId && !result.upgraded) {
        const subscriptionRun = await subscriptionRunOf(orm.em.fork(), result.subscriptionId).catch((err: unknown) => {
          deps.log.warn({ err, subscriptionId: result.subscriptionId }, 'subscription run metadata not read');
          return null;
        });
        return withReceipt(checkoutId, { ...result, subscriptionRun });
      }
      return result && withReceipt(checkoutId, result);
    },
    /** Queues the grants of third-party benefits in their benefit-grant workflows. */
    async requestGrantsStep(checkoutId: string, scope: FulfilResult): Promise<void> {
      await withFaultPoints('requestGrantsStep', checkoutId, () => requestExternalGrants(deps, scope));
    },
    async markSucceededStep(checkoutId: string): Promise<void> {
      await withFaultPoints('markSucceededStep', checkoutId, () => markCheckoutSucceeded(orm.em.fork(), checkoutId, cfg.PUBLIC_URL));
    },
    async compensateCheckout(checkoutId: string): Promise<{ refunded: boolean }> {
      return compensateCheckout(orm.em.fork(), checkoutId, processor(), cfg.PUBLIC_URL);
    },
  };
}

export type { CheckoutConfirmActivities };
