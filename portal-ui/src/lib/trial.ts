/** A trial's terms in words: "14-day free trial", and what a subscription's trial means for its next charge. */
import { formatDate, formatMoney } from './format.ts';
import type { Subscription } from './types.ts';

/** "14-day free trial", "1-month free trial"; null without a trial. */
export function trialLabel(interval: string | null | undefined, count: number | null | undefined): string | null {
  if (!interval || !count) return null;
  return `${count}-${interval} free trial`;
}

/**
 * What a subscription's card says about its next charge: in a trial, when it ends and the first charge
 * (or that it ends then, canceled during the trial); otherwise the next renewal or the end.
 */
export function subscriptionTerms(s: Subscription): string[] {
  const end = s.ends_at ?? s.current_period_end;
  if (s.status === 'trialing' && !s.ended_at) {
    const trialEnd = s.trial_end ?? s.current_period_end;
    return [
      `Free trial until ${formatDate(trialEnd)}`,
      s.cancel_at_period_end ? `Canceled during the trial — ends on ${formatDate(end)}, nothing will be charged` : `First charge ${formatMoney(s.amount, s.currency)} on ${formatDate(trialEnd)}`,
    ];
  }
  return [s.cancel_at_period_end ? `Ends on ${formatDate(end)}` : `Next charge: ${formatMoney(s.amount, s.currency)} on ${formatDate(s.current_period_end)}`];
}
