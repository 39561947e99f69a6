/**
 * The subscriptions module's service, for the rest of the platform. Two kinds of callers:
 * - the API hands a seller's or customer's change to the subscription's workflow as an update
 *   (workflow-client.ts), whose validator decides it (workflows/src/subscriptions/rules.ts);
 * - the `subscription:<id>` workflow's activities apply every state change (changes.ts, renewal.ts,
 *   charging.ts), each inside the transaction the activity opens, under the subscription's row lock,
 *   with its webhook events in the same transaction.
 * So the workflow is the single writer of subscription state after creation; the API never writes it.
 * Amounts come from the pricing module (`cycleAmounts`, `prorate`).
 */
export {
  AlreadyCanceledSubscription,
  BILLABLE_STATUSES,
  checkProductChange,
  refusalError,
  subscriptionSettings,
  type CancellationReason,
  type ProrationBehavior,
  type SubscriptionSettings,
} from './rules.ts';
export type { BenefitScopeOut } from './state.ts';
export {
  DEFAULT_USAGE_SETTINGS,
  quoteCycle,
  renewSubscription,
  subscriptionSchedule,
  type CycleQuote,
  type RenewResult,
  type SubscriptionSchedule,
  type UsageSettings,
} from './renewal.ts';
export { chargeSubscriptionOrder, dunningMail, markUnpaid, renewAndChargeSubscription, type ChargeOutcome, type RenewAndChargeResult } from './charging.ts';
export {
  applyCancel,
  applyProductChange,
  applyRevoke,
  applyUncancel,
  quoteProductChange,
  type CancelInput,
  type ChangeResult,
  type ProductChangeInput,
} from './changes.ts';
