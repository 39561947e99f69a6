/**
 * checkout-expiry:<checkout_id> — sleeps until the checkout's `expires_at`, then marks it `expired`
 * if it is still open (the activity emits `checkout.updated`). A checkout confirmed in the meantime
 * is left alone.
 *
 * Superseded by the one checkout-expiry sweeper per task queue (checkout-expiry-sweeper.workflow.ts):
 * nothing starts this workflow any more. It stays registered (with its `expireCheckout` activity) so
 * runs started by earlier versions of the API, and their recorded `workflow_starts` rows still
 * pending, finish. Remove it once no deployment can have such runs left.
 */
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { CheckoutActivities } from '../../../workers/src/activities/checkouts.activities.ts';

const { expireCheckout } = proxyActivities<CheckoutActivities>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 20 },
});

export interface CheckoutExpiryInput {
  checkoutId: string;
  /** ISO date-time. */
  expiresAt: string;
}

export async function checkoutExpiryWorkflow({ checkoutId, expiresAt }: CheckoutExpiryInput): Promise<{ status: string | null }> {
  let until = Date.parse(expiresAt);
  // The activity reports a later expiry when the row's clock disagrees; a few rounds at most.
  for (let round = 0; round < 10; round++) {
    const wait = until - Date.now();
    if (wait > 0) await sleep(wait);
    const result = await expireCheckout(checkoutId);
    if (!result.retryAt) return { status: result.status };
    until = Date.parse(result.retryAt);
  }
  return { status: 'open' };
}
