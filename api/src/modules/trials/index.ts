/**
 * Free trials (docs/billing.md, "Trials"): a product, a checkout link or a checkout may carry a trial
 * (`trial_interval` day | week | month | year and `trial_interval_count` 1–1000, as later Polar
 * versions do). A checkout's own trial wins over its product's. A checkout with an active trial saves
 * the card without charging (`is_payment_required` false, `is_payment_setup_required` true); its
 * fulfilment starts a `trialing` subscription whose first period is the trial, converted at its end by
 * the first charge (subscriptions/service.ts renewal).
 *
 * One trial per customer and product: a customer who already had a trial of the product (known at the
 * checkout by `customer_id`/external id or by the email typed) gets no trial and pays the first period
 * at once, as a checkout without a trial. The confirmation that gives a trial records it
 * (`redeemTrial`, a `trial_redemptions` row unique per product and customer, and per product and email)
 * in its commit: of two checkouts of one buyer confirmed at once, the second finds the row and is
 * refused with `TrialAlreadyRedeemed` (nothing charged; its checkout then charges the first period).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, type ValidationIssue } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { addMonths } from '../pricing/index.ts';
import { Subscription } from '../subscriptions/entities.ts';

import { TRIAL_INTERVALS, type TrialInterval } from './intervals.ts';
import { TrialRedemption } from './entities.ts';

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

/** Whether the customer (or, when given, anyone with the email) ever had a trial of the product. */
export async function hadTrial(em: EntityManager, customerId: string | null, productId: string, email?: string | null): Promise<boolean> {
  const who = [...(customerId ? [{ customer: customerId }] : []), ...(email ? [{ customerEmail: email.toLowerCase() }] : [])];
  if (!who.length) return false;
  if (await em.count(TrialRedemption, { product: productId, $or: who })) return true;
  return customerId != null && (await em.count(Subscription, { customer: customerId, product: productId, trialStart: { $ne: null } })) > 0;
}

export const TrialAlreadyRedeemed = () =>
  new ApiError(
    403,
    'TrialAlreadyRedeemed',
    'A trial of this product was already used by this customer. Nothing was charged; the checkout now charges the first period: confirm again to pay it.',
  );

/**
 * Records the trial a confirming checkout gives to `customerId` (flushed already), inside the
 * confirmation's transaction. False when the customer or the email already redeemed a trial of the
 * product, possibly by a checkout committed a moment ago: the unique keys decide, so two concurrent
 * confirmations cannot both win.
 */
export async function redeemTrial(
  tx: EntityManager,
  c: { id: string; organization: { id: string }; product: { id: string }; customerEmail?: string | null },
  customerId: string,
): Promise<boolean> {
  const rows = await tx.execute<{ id: string }[]>(
    `insert into "trial_redemptions" ("id", "organization_id", "product_id", "customer_id", "customer_email", "checkout_id", "created_at")
     values (?, ?, ?, ?, ?, ?, now()) on conflict do nothing returning "id"`,
    [randomUUID(), c.organization.id, c.product.id, customerId, (c.customerEmail ?? '').toLowerCase(), c.id],
  );
  return rows.length === 1;
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
  if (await buyerHadTrial(em, c)) return null;
  return trial;
}

/** Whether the checkout's buyer (its customer, else the organization's customer with the email, or the email) had a trial of the product. */
async function buyerHadTrial(em: EntityManager, c: CheckoutTrialInput): Promise<boolean> {
  const customerId =
    c.customer?.id ??
    (c.customerEmail
      ? (await em.findOne(Customer, { organization: c.organization.id, email: c.customerEmail, deletedAt: null }, { fields: ['id'] }))?.id
      : undefined);
  return hadTrial(em, customerId ?? null, c.product.id, c.customerEmail);
}

/**
 * At confirmation, after the checkout was recomputed: whether the trial it showed (`shown`) is gone
 * because the buyer has had one meanwhile (another checkout's trial committed first). Then the
 * confirmation is refused with `TrialAlreadyRedeemed` rather than charging someone who saw a trial.
 */
export async function trialLostAtConfirm(em: EntityManager, c: CheckoutTrialInput & { activeTrialInterval?: TrialInterval | null }, shown: boolean): Promise<boolean> {
  if (!shown || c.activeTrialInterval) return false;
  return buyerHadTrial(em, c);
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
