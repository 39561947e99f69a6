/** Checkout activities: expiring an open checkout once its time is up. */
import type { Deps } from '@emporia/api/src/deps.ts';
import { expireCheckoutById } from '@emporia/api/src/modules/checkouts/service.ts';

export function createCheckoutActivities(deps: Deps) {
  const { orm, cfg } = deps;
  return {
    /**
     * Idempotent: marks the checkout `expired` (and writes `checkout.updated`) only if it is still open
     * and past `expires_at`. Answers its status, or `retryAt` when it is open but not yet due.
     */
    async expireCheckout(checkoutId: string): Promise<{ status: string | null; retryAt: string | null }> {
      return expireCheckoutById(orm.em.fork(), checkoutId, cfg.PUBLIC_URL);
    },
  };
}

export type CheckoutActivities = ReturnType<typeof createCheckoutActivities>;
