/**
 * A checkout's free trial as the buyer sees it: the trial's length, the first charge (amount and date)
 * and nothing due today. The amounts are the API's: a trial checkout keeps the first period's totals.
 */
import { formatDate, formatMoney, formatRecurring, intervalLabel } from '../../lib/format.ts';
import { trialLabel } from '../../lib/trial.ts';
import type { Checkout } from '../../lib/types.ts';

export interface CheckoutTrial {
  label: string;
  /** When the trial ends and the first period is charged (if confirmed now). */
  end: string | null;
  /** The first charge, or null when it is not the checkout's total (a one-time discount is spent on the trial's $0 order). */
  firstCharge: number | null;
}

/** The trial the buyer gets now, if any (none for a returning customer or a free price). */
export function checkoutTrial(c: Checkout, recurring: string | null): CheckoutTrial | null {
  const label = trialLabel(c.active_trial_interval, c.active_trial_interval_count);
  if (!label || !recurring || c.is_payment_required) return null;
  const onceDiscount = !!c.discount_amount && c.discount?.duration === 'once';
  return { label, end: c.trial_end, firstCharge: onceDiscount ? null : (c.total_amount ?? 0) };
}

/** "Then $20.00 / month starting Dec 10, 2026" (before tax when the first charge is not the total). */
export function thenLine(trial: CheckoutTrial, c: Checkout, currency: string, recurring: string): string {
  const amount =
    trial.firstCharge !== null
      ? formatRecurring(trial.firstCharge, currency, recurring)
      : `${formatRecurring(c.subtotal_amount ?? 0, currency, recurring)}${c.tax_amount ? ' plus tax' : ''}`;
  return `Then ${amount} starting ${formatDate(trial.end)}`;
}

export function TrialTerms({ trial, checkout, currency, recurring }: { trial: CheckoutTrial; checkout: Checkout; currency: string; recurring: string }) {
  return (
    <div className="trial-terms" role="group" aria-label="Free trial">
      <p className="trial-label">{trial.label}</p>
      <p>{thenLine(trial, checkout, currency, recurring)}</p>
      {trial.firstCharge === null && <p className="muted small">The discount applies to the trial; the first charge after it is at the full price.</p>}
    </div>
  );
}

/** The line under the button: nothing charged now, when the first charge comes, how to avoid it. */
export function TrialNote({ trial, currency, recurring }: { trial: CheckoutTrial; currency: string; recurring: string }) {
  const first = trial.firstCharge !== null ? formatMoney(trial.firstCharge, currency) : 'the full price';
  const end = formatDate(trial.end);
  return (
    <p className="muted small">
      Nothing is charged today. Your card is charged {first} on {end}, then every {intervalLabel(recurring)} until you cancel. Cancel before {end} from
      your customer portal and you will not be charged.
    </p>
  );
}
