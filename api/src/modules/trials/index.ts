/**
 * Free trials (docs/billing.md, "Trials"): a product, a checkout link or a checkout may carry a trial
 * (`trial_interval` day | week | month | year and `trial_interval_count` 1–1000, as later Polar
 * versions do). A checkout's own trial wins over its product's. A checkout with an active trial saves
 * the card without charging (`is_payment_required` false, `is_payment_setup_required` true); its
 * fulfilment starts a `trialing` subscription whose first period is the trial, converted at its end by
 * the first charge (subscriptions/service.ts renewal).
 *
 * One trial per customer and product: a customer who already had a trial subscription of the product
 * (known at the checkout by `customer_id`/external id or by the email typed) gets no trial and pays
 * the first period at once, as a checkout without a trial.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import type { ValidationIssue } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { addMonths } from '../pricing/index.ts';
import { Subscription } from '../subscriptions/entities.ts';

import { TRIAL_INTERVALS, type TrialInterval } from './intervals.ts';

export { TRIAL_INTERVALS, type TrialInterval };

export interface Trial {
  interval: TrialInterval;
  count: number;
}

/** Request fields (products, checkout links, checkouts). */
export const trialInputFields = {
  trial_interval: z.enum(TRIAL_INTERVALS).nullish(),
  trial_interval_count: z.number().int().min(1).max(1000).nullish(),
};

/** Read-model fields. */
export const trialOutFields = {
  trial_interval: z.enum(TRIAL_INTERVALS).nullable(),
  trial_interval_count: z.number().int().nullable(),
};

/** The stored columns of an entity carrying a trial. */
export interface TrialColumns {
  trialInterval?: TrialInterval | null;
  trialIntervalCount?: number | null;
}

export function trialOf(row: TrialColumns): Trial | null {
  return row.trialInterval && row.trialIntervalCount ? { interval: row.trialInterval, count: row.trialIntervalCount } : null;
}

export function serializeTrial(row: TrialColumns): { trial_interval: TrialInterval | null; trial_interval_count: number | null } {
  const t = trialOf(row);
  return { trial_interval: t?.interval ?? null, trial_interval_count: t?.count ?? null };
}

/**
 * The trial a request body sets: `undefined` when it names neither field (leave as is), `null` when
 * both are null (no trial / clear it). Both or neither: one without the other is a 422 at the missing
 * one; a trial on a one-time product is a 422 at `trial_interval`. Issues are pushed onto `errors`.
 */
export function trialFromInput(
  input: { trial_interval?: TrialInterval | null; trial_interval_count?: number | null },
  recurring: boolean,
  errors: ValidationIssue[],
): Trial | null | undefined {
  const interval = input.trial_interval;
  const count = input.trial_interval_count;
  if (interval === undefined && count === undefined) return undefined;
  if (interval == null && count == null) return null;
  if (interval == null) {
    errors.push({ type: 'missing', loc: ['body', 'trial_interval'], msg: 'trial_interval is required with trial_interval_count.' });
    return undefined;
  }
  if (count == null) {
    errors.push({ type: 'missing', loc: ['body', 'trial_interval_count'], msg: 'trial_interval_count is required with trial_interval.' });
    return undefined;
  }
  if (!recurring) {
    errors.push({ type: 'value_error', loc: ['body', 'trial_interval'], msg: 'Trials are only available for recurring products.', input: interval });
    return undefined;
  }
  return { interval, count };
}

export function trialColumns(t: Trial | null): { trialInterval: TrialInterval | null; trialIntervalCount: number | null } {
  return { trialInterval: t?.interval ?? null, trialIntervalCount: t?.count ?? null };
}

const DAY = 86_400_000;

/** When a trial started at `start` ends (months and years keep the day of month, clamped at month end). */
export function trialEnd(start: Date, t: Trial): Date {
  switch (t.interval) {
    case 'day':
      return new Date(start.getTime() + t.count * DAY);
    case 'week':
      return new Date(start.getTime() + 7 * t.count * DAY);
    case 'month':
      return addMonths(start, t.count);
    case 'year':
      return addMonths(start, 12 * t.count);
  }
}

/** Whether the customer ever had a trial subscription of the product. */
export async function hadTrial(em: EntityManager, customerId: string, productId: string): Promise<boolean> {
  return (await em.count(Subscription, { customer: customerId, product: productId, trialStart: { $ne: null } })) > 0;
}

/** What `activeCheckoutTrial` reads of a checkout. */
export interface CheckoutTrialInput extends TrialColumns {
  organization: { id: string };
  product: TrialColumns & { id: string; recurringInterval?: string | null };
  customer?: { id: string } | null;
  customerEmail?: string | null;
  subscriptionId?: string | null;
}

/**
 * The trial a checkout gives now: its own, else its product's; none for a one-time product, an
 * upgrade checkout (`subscription_id`), a free price, or a customer who already had a trial of the
 * product (the checkout's customer, else the organization's customer with the typed email).
 */
export async function activeCheckoutTrial(em: EntityManager, c: CheckoutTrialInput, free: boolean): Promise<Trial | null> {
  const trial = trialOf(c) ?? trialOf(c.product);
  if (!trial || free || !c.product.recurringInterval || c.subscriptionId) return null;
  const customerId =
    c.customer?.id ??
    (c.customerEmail
      ? (await em.findOne(Customer, { organization: c.organization.id, email: c.customerEmail, deletedAt: null }, { fields: ['id'] }))?.id
      : undefined);
  if (customerId && (await hadTrial(em, customerId, c.product.id))) return null;
  return trial;
}

/** The payment flags of a checkout amount, as `checkoutAmounts` answers them. */
export interface PaymentFlags {
  is_free_product_price: boolean;
  is_payment_required: boolean;
  is_payment_setup_required: boolean;
  is_payment_form_required: boolean;
}

/**
 * Sets the checkout's active trial (`activeTrialInterval`/`Count`) and, when there is one, turns the
 * payment into a card setup: nothing is charged now.
 */
export async function applyCheckoutTrial<A extends PaymentFlags>(
  em: EntityManager,
  c: CheckoutTrialInput & { activeTrialInterval?: TrialInterval | null; activeTrialIntervalCount?: number | null },
  a: A,
): Promise<A> {
  const trial = await activeCheckoutTrial(em, c, a.is_free_product_price);
  c.activeTrialInterval = trial?.interval ?? null;
  c.activeTrialIntervalCount = trial?.count ?? null;
  if (!trial) return a;
  return { ...a, is_payment_required: false, is_payment_setup_required: true, is_payment_form_required: true };
}

/** The trial period a confirmed checkout's subscription starts with at `now`, if any. */
export function checkoutTrialPeriod(
  c: { activeTrialInterval?: TrialInterval | null; activeTrialIntervalCount?: number | null },
  now: Date,
): { start: Date; end: Date } | null {
  const t = trialOf({ trialInterval: c.activeTrialInterval, trialIntervalCount: c.activeTrialIntervalCount });
  return t ? { start: now, end: trialEnd(now, t) } : null;
}
