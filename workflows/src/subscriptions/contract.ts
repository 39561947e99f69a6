/** The subscription workflow's input, its updates' arguments and answers, and its activities. */
import type {
  applyCancel,
  applyProductChange,
  applyRevoke,
  applyUncancel,
  chargeSubscriptionOrder,
  dunningMail,
  markUnpaid,
  renewAndChargeSubscription,
  renewSubscription,
  subscriptionSchedule,
  CancelInput,
  ProductChangeInput,
} from '../../../api/src/modules/subscriptions/service.ts';
import type { Answer } from '../contract-types.ts';

export interface SubscriptionWorkflowInput {
  subscriptionId: string;
  /** Waits before each payment retry after a declined renewal. */
  dunningDelaysMs?: number[];
}

export type CancellationReason =
  | 'customer_service' | 'low_quality' | 'missing_features' | 'switched_service' | 'too_complex' | 'too_expensive' | 'unused' | 'other';
export interface CancelArgs {
  reason?: CancellationReason | null;
  comment?: string | null;
}
export interface ChangeProductArgs {
  productId: string;
  prorationBehavior: 'invoice' | 'prorate' | null;
}
export interface ChangeAnswer {
  subscriptionId: string;
  status: string;
  /** The `subscription_update` order of an `invoice` change, and whether its charge went through. */
  orderId?: string | null;
  paid?: boolean | null;
}

export interface SubscriptionActivities {
  subscriptionSchedule(subscriptionId: string): Answer<typeof subscriptionSchedule>;
  renewSubscription(subscriptionId: string, expectedPeriodEnd: string): Answer<typeof renewSubscription>;
  /** The period-end step and the first charge of its order in one go (the common path of a renewal). */
  renewAndCharge(subscriptionId: string, expectedPeriodEnd: string): Answer<typeof renewAndChargeSubscription>;
  chargeSubscriptionOrder(orderId: string, attempt: number): Answer<typeof chargeSubscriptionOrder>;
  markSubscriptionUnpaid(subscriptionId: string, atIso: string): Answer<typeof markUnpaid>;
  subscriptionDunningMail(orderId: string, attempt: number, nextRetryAt: string | null, reason: string | null): Answer<typeof dunningMail>;
  cancelSubscription(subscriptionId: string, input: CancelInput, atIso: string): Answer<typeof applyCancel>;
  uncancelSubscription(subscriptionId: string): Answer<typeof applyUncancel>;
  revokeSubscription(subscriptionId: string, input: CancelInput, atIso: string): Answer<typeof applyRevoke>;
  changeSubscriptionProduct(subscriptionId: string, input: ProductChangeInput, atIso: string): Answer<typeof applyProductChange>;
}
