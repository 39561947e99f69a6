/**
 * The pricing module: every amount the platform charges, credits or refunds is computed here, in
 * integer minor units with exact (BigInt) intermediate arithmetic and half-away-from-zero rounding.
 * Checkout totals, discount durations across cycles, proration on plan changes, tax on top, the tax
 * share of a refund, and billing-period arithmetic with month-end anchors.
 */
import { discountAmount, divideRoundHalfAwayFromZero, type DiscountTerms } from './discounts.ts';

export { discountAmount, divideRoundHalfAwayFromZero, type DiscountTerms };
export { allocate, meteredLine, parseDecimal, formatDecimal, type MeteredLine } from './metered.ts';

export class PricingError extends Error {
  constructor(
    public readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'PricingError';
  }
}

/** round(amount × numerator / denominator), half away from zero. */
export function mulDiv(amount: number, numerator: number | bigint, denominator: number | bigint): number {
  return Number(divideRoundHalfAwayFromZero(BigInt(amount) * BigInt(numerator), BigInt(denominator)));
}

/** Tax on a net amount at `basisPoints` (0 = no tax configured). */
export function taxOn(net: number, basisPoints: number): number {
  if (!Number.isSafeInteger(net) || net < 0) throw new RangeError('net must be a non-negative integer');
  return mulDiv(net, basisPoints, 10_000);
}

export type PriceTerms =
  | { amountType: 'fixed'; priceAmount: number; currency: string }
  | { amountType: 'custom'; minimumAmount: number | null; maximumAmount: number | null; presetAmount: number | null; currency: string }
  | { amountType: 'free'; currency: string }
  | { amountType: 'metered_unit'; currency: string };

/** Stripe's smallest charge in most currencies; custom amounts below it (other than 0) are refused. */
export const MINIMUM_CHARGE = 50;
export const DEFAULT_CUSTOM_AMOUNT = 1000;

/** The amount a price asks for, honouring a buyer's requested amount for pay-what-you-want prices. */
export function priceAmount(price: PriceTerms, requested?: number | null): number {
  switch (price.amountType) {
    case 'fixed':
      return price.priceAmount;
    case 'free':
    case 'metered_unit':
      // Metered usage is billed at the end of the period, never up front.
      return 0;
    case 'custom': {
      if (requested === undefined || requested === null) return price.presetAmount ?? price.minimumAmount ?? DEFAULT_CUSTOM_AMOUNT;
      if (!Number.isSafeInteger(requested) || requested < 0) throw new PricingError('amount', 'Amount must be a non-negative integer.');
      const min = price.minimumAmount ?? MINIMUM_CHARGE;
      if (requested < min && requested !== 0) throw new PricingError('amount', `Amount must be at least ${min}.`);
      if (requested === 0 && (price.minimumAmount ?? 0) > 0) throw new PricingError('amount', `Amount must be at least ${min}.`);
      if (price.maximumAmount !== null && requested > price.maximumAmount) {
        throw new PricingError('amount', `Amount must be at most ${price.maximumAmount}.`);
      }
      return requested;
    }
  }
}

export interface CheckoutAmounts {
  /** Before discount. */
  subtotal_amount: number;
  amount: number;
  discount_amount: number;
  /** amount − discount. */
  net_amount: number;
  tax_amount: number;
  /** net + tax. */
  total_amount: number;
  is_free_product_price: boolean;
  is_discount_applicable: boolean;
  is_payment_required: boolean;
  is_payment_setup_required: boolean;
  is_payment_form_required: boolean;
}

/**
 * Totals of a checkout: the price (or the requested custom amount), the discount if it applies to the
 * product, tax on the net amount. Recurring non-free prices need a saved payment method.
 */
export function checkoutAmounts(input: {
  price: PriceTerms;
  requestedAmount?: number | null;
  recurring: boolean;
  discount?: { terms: DiscountTerms; appliesToProduct: boolean } | null;
  taxBasisPoints?: number;
}): CheckoutAmounts {
  const amount = priceAmount(input.price, input.requestedAmount);
  const free = input.price.amountType === 'free';
  const applicable = Boolean(input.discount?.appliesToProduct) && !free && amount > 0;
  const discount = applicable ? discountAmount(amount, input.discount!.terms) : 0;
  const net = amount - discount;
  const tax = taxOn(net, input.taxBasisPoints ?? 0);
  const total = net + tax;
  const paymentRequired = total > 0;
  const setupRequired = input.recurring && !free;
  return {
    subtotal_amount: amount,
    amount,
    discount_amount: discount,
    net_amount: net,
    tax_amount: tax,
    total_amount: total,
    is_free_product_price: free,
    is_discount_applicable: applicable,
    is_payment_required: paymentRequired,
    is_payment_setup_required: setupRequired,
    is_payment_form_required: paymentRequired || setupRequired,
  };
}

// ---------------------------------------------------------------------------------------------
// Billing periods

export type Interval = 'month' | 'year';

function daysInMonth(year: number, monthIndex: number): number {
  return new Date(Date.UTC(year, monthIndex + 1, 0)).getUTCDate();
}

/**
 * `start` plus `n` months, keeping the anchor day (the subscription's first day of month): a period
 * anchored on the 31st ends on Feb 28/29, then Mar 31 — never drifting to the 28th for good.
 */
export function addMonths(start: Date, n: number, anchorDay = start.getUTCDate()): Date {
  const y = start.getUTCFullYear();
  const m = start.getUTCMonth() + n;
  const year = y + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  const day = Math.min(anchorDay, daysInMonth(year, month));
  return new Date(
    Date.UTC(year, month, day, start.getUTCHours(), start.getUTCMinutes(), start.getUTCSeconds(), start.getUTCMilliseconds()),
  );
}

/** End of the period that starts at `start`. */
export function periodEnd(start: Date, interval: Interval, anchorDay?: number): Date {
  return addMonths(start, interval === 'year' ? 12 : 1, anchorDay);
}

/** Start of the `cycle`-th period (0 = the first) of a subscription started at `startedAt`. */
export function cycleStart(startedAt: Date, interval: Interval, cycle: number): Date {
  return addMonths(startedAt, (interval === 'year' ? 12 : 1) * cycle, startedAt.getUTCDate());
}

// ---------------------------------------------------------------------------------------------
// Discounts over time

export type DiscountDuration = { duration: 'once' } | { duration: 'forever' } | { duration: 'repeating'; durationInMonths: number };

/**
 * Whether a discount redeemed at `appliedAt` still applies to a period starting at `periodStart`:
 * once → only the first period; forever → always; repeating → while the period starts no later than
 * `appliedAt` + (months − 1) calendar months.
 */
export function discountApplies(d: DiscountDuration, appliedAt: Date, periodStart: Date, isFirstPeriod: boolean): boolean {
  switch (d.duration) {
    case 'once':
      return isFirstPeriod;
    case 'forever':
      return true;
    case 'repeating':
      return periodStart.getTime() <= addMonths(appliedAt, d.durationInMonths - 1).getTime();
  }
}

// ---------------------------------------------------------------------------------------------
// Proration

export interface ProrationFactor {
  /** Seconds left in the period at the change. */
  remaining: bigint;
  /** Seconds in the period. */
  total: bigint;
}

export function prorationFactor(at: Date, periodStart: Date, periodEndAt: Date): ProrationFactor {
  const total = BigInt(Math.round((periodEndAt.getTime() - periodStart.getTime()) / 1000));
  if (total <= 0n) throw new RangeError('period must have a positive length');
  const left = BigInt(Math.round((periodEndAt.getTime() - at.getTime()) / 1000));
  return { remaining: left < 0n ? 0n : left > total ? total : left, total };
}

/** Credit for the unused part of the old price (negative) and debit for the new price over the same time. */
export function prorate(oldAmount: number, newAmount: number, f: ProrationFactor): { credit: number; debit: number; net: number } {
  const credit = -mulDiv(oldAmount, f.remaining, f.total);
  const debit = mulDiv(newAmount, f.remaining, f.total);
  return { credit, debit, net: credit + debit };
}

// ---------------------------------------------------------------------------------------------
// Refunds

/**
 * The tax returned with a refund of `amount` (tax excluded) from an order: refunding the whole
 * remaining net returns all remaining tax; otherwise the proportional share, never more than remains.
 */
export function refundTax(order: { netAmount: number; taxAmount: number; refundedAmount: number; refundedTaxAmount: number }, amount: number): number {
  const remainingNet = order.netAmount - order.refundedAmount;
  const remainingTax = order.taxAmount - order.refundedTaxAmount;
  if (!Number.isSafeInteger(amount) || amount <= 0) throw new PricingError('amount', 'Refund amount must be a positive integer.');
  if (amount > remainingNet) throw new PricingError('amount', 'Refund amount exceeds what remains to refund.');
  if (amount === remainingNet) return remainingTax;
  if (order.netAmount === 0) return 0;
  return Math.min(remainingTax, mulDiv(amount, order.taxAmount, order.netAmount));
}

// ---------------------------------------------------------------------------------------------
// Renewal cycles

export interface CycleAmounts {
  /** Price (minus the credit already used) before discount: subtotal − discount = net. */
  subtotal: number;
  discount: number;
  net: number;
  tax: number;
  total: number;
  /** Credit left over (≤ 0) when the proration credit exceeds what the cycle costs: carried to the next cycle. */
  carry: number;
  /** Whether the subscription's discount still applied to this period (else it is dropped). */
  discountApplied: boolean;
}

/**
 * The order of one renewal cycle: the price, the subscription's discount while its duration lasts, the
 * proration carried from a mid-cycle change (positive owed, negative credit), tax on the net. Metered
 * usage of the period just ended (`meteredAmount`) is billed with the price and discounted with it. A credit
 * larger than the cycle leaves a zero order and carries the rest; nothing is ever rounded away.
 */
export function cycleAmounts(input: {
  priceAmount: number;
  discount: { terms: DiscountTerms; duration: DiscountDuration; appliedAt: Date } | null;
  periodStart: Date;
  isFirstPeriod: boolean;
  proration: number;
  taxBasisPoints?: number;
  /** The cycle's metered usage lines (minor units, see metered.ts): added to the price before the discount. */
  meteredAmount?: number;
}): CycleAmounts {
  const { proration } = input;
  const metered = input.meteredAmount ?? 0;
  if (!Number.isSafeInteger(metered) || metered < 0) throw new RangeError('meteredAmount must be a non-negative integer');
  const base = input.priceAmount + metered;
  if (!Number.isSafeInteger(input.priceAmount) || input.priceAmount < 0) throw new RangeError('priceAmount must be a non-negative integer');
  if (!Number.isSafeInteger(proration)) throw new RangeError('proration must be an integer');
  const d = input.discount;
  const applies = Boolean(d) && discountApplies(d!.duration, d!.appliedAt, input.periodStart, input.isFirstPeriod);
  const discount = applies ? discountAmount(base, d!.terms) : 0;
  const raw = base - discount + proration;
  const net = Math.max(raw, 0);
  const carry = Math.min(raw, 0);
  const tax = taxOn(net, input.taxBasisPoints ?? 0);
  return { subtotal: net + discount, discount, net, tax, total: net + tax, carry, discountApplied: applies };
}
