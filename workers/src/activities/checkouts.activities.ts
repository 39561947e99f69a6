/** Checkout activities: expiring open checkouts once their time is up, settling abandoned charges. */
import type { Deps } from '@emporia/api/src/deps.ts';
import type { CheckoutActivities, SweepRound } from '@emporia/workflows/contracts';
import { expireDueCheckouts } from '@emporia/api/src/modules/checkouts/expiry.ts';
import { settleAbandonedCharges } from '@emporia/api/src/modules/checkouts/confirm.ts';

export function createCheckoutActivities(deps: Deps): CheckoutActivities {
  const { orm, cfg } = deps;
  return {
    /**
     * One batch of the checkout-expiry sweeper (one transaction, idempotent): expires up to `limit` due
     * open checkouts. `ttlSeconds` is this process's CHECKOUT_TTL_SECONDS, the sweeper's longest sleep.
     */
    async expireDueCheckouts({ limit }: { limit: number }): Promise<SweepRound> {
      const batch = await expireDueCheckouts(orm.em.fork(), cfg.PUBLIC_URL, limit);
      // Same round: settle charges whose confirmation died before recording their outcome.
      const charges = await settleAbandonedCharges(orm.em.fork(), deps.processor, {
        graceSeconds: cfg.CHECKOUT_CHARGE_SETTLE_SECONDS,
        limit: 20,
        log: deps.log,
      });
      return {
        ...batch,
        ttlSeconds: cfg.CHECKOUT_TTL_SECONDS,
        chargesSettled: charges.settled,
        nextChargeDueAt: charges.nextDueAt,
        chargeSettleSeconds: cfg.CHECKOUT_CHARGE_SETTLE_SECONDS,
      };
    },
  };
}

export type { CheckoutActivities, SweepRound };
