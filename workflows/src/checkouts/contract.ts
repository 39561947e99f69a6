/** The checkout workflows' inputs and results, and the activities they call. */
import type { ExpiredBatch } from '../../../api/src/modules/checkouts/expiry.ts';
import type { FulfilResult } from '../../../api/src/modules/orders/fulfilment.ts';
import type { RunMetadata } from '../metadata.ts';

export interface CheckoutConfirmInput {
  checkoutId: string;
}

export interface CheckoutConfirmResult {
  status: 'succeeded' | 'failed' | 'skipped';
  orderId: string | null;
  subscriptionId: string | null;
  grantsPending: number;
}

/**
 * The fulfilment's answer, with what the subscription's lifecycle run shows and is found by.
 * `receiptMailed`: the step mailed the receipt itself after its commit (`receipt` is then null); an
 * answer without it (recorded before the step mailed, or SMTP did not accept the mail in time) leaves
 * the receipt to the workflow's mail activity.
 */
export type Fulfilled = FulfilResult & { subscriptionRun?: RunMetadata | null; receiptMailed?: boolean };

export interface CheckoutConfirmActivities {
  /** Payment method, order, subscription, first-party grants, checkout succeeded: one transaction. */
  fulfilStep(checkoutId: string): Promise<Fulfilled | null>;
  /** Queues the grants of third-party benefits in their benefit-grant workflows. */
  requestGrantsStep(checkoutId: string, scope: FulfilResult): Promise<void>;
  markSucceededStep(checkoutId: string): Promise<void>;
  /** Refunds the charge and reopens the checkout. */
  compensateCheckout(checkoutId: string): Promise<{ refunded: boolean }>;
}

export interface CheckoutExpirySweeperInput {
  /** Checkouts expired per round (one transaction). */
  limit?: number;
  /** Shortest sleep between rounds that did not fill a batch. */
  minSleepMs?: number;
  /** Rounds before continue-as-new. */
  maxIterations?: number;
}

/** One round of the checkout-expiry sweeper: expired checkouts and settled abandoned charges. */
export interface SweepRound extends ExpiredBatch {
  ttlSeconds: number;
  chargesSettled: number;
  /** When the oldest unsettled charge attempt falls due (ISO), null when there is none. */
  nextChargeDueAt: string | null;
  chargeSettleSeconds: number;
}

export interface CheckoutActivities {
  /** One batch (one transaction, idempotent): expires up to `limit` due open checkouts, settles abandoned charges. */
  expireDueCheckouts(input: { limit: number }): Promise<SweepRound>;
}
