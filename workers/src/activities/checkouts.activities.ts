/** Checkout activities: expiring open checkouts once their time is up, settling abandoned charges. */
import type { Deps } from '@emporia/api/src/deps.ts';
import { expireCheckoutById, expireDueCheckouts, type ExpiredBatch } from '@emporia/api/src/modules/checkouts/service.ts';
import { settleAbandonedCharges } from '@emporia/api/src/modules/checkouts/confirm.ts';

/** One round of the checkout-expiry sweeper: expired checkouts and settled abandoned charges. */
export interface SweepRound extends ExpiredBatch {
  ttlSeconds: number;
  /** Absent from rounds of workers older than the charge settling. */
  chargesSettled?: number;
  /** When the oldest unsettled charge attempt falls due (ISO), null when there is none. */
  nextChargeDueAt?: string | null;
  chargeSettleSeconds?: number;
}

export function createCheckoutActivities(deps: Deps) {
  const { orm, cfg } = deps;
  return {
    /**
     * The per-checkout expiry workflow's activity. Nothing starts that workflow any more (the sweeper
     * below replaced it); kept for its runs started before the change.
     * Idempotent: marks the checkout `expired` (and writes `checkout.updated`) only if it is still open
     * and past `expires_at`. Answers its status, or `retryAt` when it is open but not yet due.
     */
    async expireCheckout(checkoutId: string): Promise<{ status: string | null; retryAt: string | null }> {
      return expireCheckoutById(orm.em.fork(), checkoutId, cfg.PUBLIC_URL);
    },

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

export type CheckoutActivities = ReturnType<typeof createCheckoutActivities>;
