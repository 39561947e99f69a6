/**
 * The steps of the checkout-confirm workflow. Each is idempotent (keyed by the checkout id and
 * enforced by unique constraints) and runs on its own EntityManager fork; see orders/fulfilment.ts.
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
import { SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL, subscriptionWorkflowId } from '@emporia/workflows/ids';
import type { CheckoutConfirmActivities, Fulfilled } from '@emporia/workflows/contracts';
import { faultPoint, withFaultPoints } from '../fault-injection.ts';

export function createCheckoutConfirmActivities(deps: Deps): CheckoutConfirmActivities {
  const { integrations } = deps;
  const { orm, cfg } = deps;
  const processor = () => deps.processor;
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
        return { ...result, subscriptionRun };
      }
      return result;
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
