/**
 * The rules of a seller's or customer's change to a subscription: cancel at period end, uncancel,
 * revoke, change product. They read the state the subscription's workflow holds (status, ended,
 * cancel at period end), so the workflow's update validators refuse a change without running
 * anything; the API asks them by executing the update, and applies the same function to the row only
 * when no workflow runs any more (the subscription ended). A refusal carries the error type and HTTP
 * status the API answers with. Plain functions: the workflow and the API both load this file.
 */
import type { SUBSCRIPTION_UPDATES } from '../ids.ts';

export type SubscriptionUpdateName = keyof typeof SUBSCRIPTION_UPDATES;

/** What the rules read. */
export interface SubscriptionRuleState {
  status: string;
  /** Ended (an end date or a final status). */
  ended: boolean;
  cancelAtPeriodEnd: boolean;
}

export interface Refusal {
  /** The error type the API answers (`AlreadyCanceledSubscription`, ...), and its HTTP status. */
  type: string;
  status: number;
  message: string;
}

const BILLABLE_STATUSES = ['trialing', 'active', 'past_due'];
const ENDED_STATUSES = ['canceled', 'unpaid', 'incomplete_expired'];

export const isEndedState = (s: SubscriptionRuleState) => s.ended || ENDED_STATUSES.includes(s.status);

const alreadyCanceled = (message = 'This subscription is already canceled or will be at the end of the period.'): Refusal => ({
  type: 'AlreadyCanceledSubscription',
  status: 403,
  message,
});

/** Why `update` may not be applied to a subscription in state `s`, or null when it may. */
export function refusalOf(update: SubscriptionUpdateName, s: SubscriptionRuleState): Refusal | null {
  const ended = isEndedState(s);
  switch (update) {
    case 'cancel':
      return ended || !BILLABLE_STATUSES.includes(s.status) || s.cancelAtPeriodEnd ? alreadyCanceled() : null;
    case 'uncancel':
      if (ended) return { type: 'ResourceUnavailable', status: 410, message: 'This subscription has ended.' };
      return s.cancelAtPeriodEnd ? null : { type: 'BadRequest', status: 400, message: 'This subscription is not set to cancel at the end of the period.' };
    case 'revoke':
      return ended ? alreadyCanceled('This subscription is already revoked.') : null;
    case 'changeProduct':
      return ended || s.cancelAtPeriodEnd ? alreadyCanceled() : null;
  }
}
