import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  PricingError,
  addMonths,
  checkoutAmounts,
  cycleAmounts,
  cycleStart,
  discountApplies,
  priceAmount,
  prorate,
  prorationFactor,
  refundTax,
  taxOn,
} from './index.ts';

const money = fc.integer({ min: 0, max: 99_999_999 });
const bp = fc.integer({ min: 0, max: 10_000 });
const discount = fc.oneof(
  bp.map((basis_points) => ({ type: 'percentage' as const, basis_points })),
  money.map((amount) => ({ type: 'fixed' as const, amount })),
);
const date = fc.date({ min: new Date('2020-01-01T00:00:00Z'), max: new Date('2035-12-31T00:00:00Z'), noInvalidDate: true });

describe('checkout amounts', () => {
  it('never go negative and always add up', () => {
    fc.assert(
      fc.property(money, discount, fc.boolean(), bp, fc.boolean(), (price, terms, applies, tax, recurring) => {
        const a = checkoutAmounts({
          price: { amountType: 'fixed', priceAmount: price, currency: 'usd' },
          recurring,
          discount: { terms, appliesToProduct: applies },
          taxBasisPoints: tax,
        });
        return (
          a.discount_amount >= 0 &&
          a.discount_amount <= a.amount &&
          a.net_amount === a.amount - a.discount_amount &&
          a.total_amount === a.net_amount + a.tax_amount &&
          a.tax_amount >= 0 &&
          a.is_payment_required === a.total_amount > 0 &&
          a.is_payment_form_required === (a.is_payment_required || a.is_payment_setup_required)
        );
      }),
    );
  });

  it('computes a worked example to the cent', () => {
    const a = checkoutAmounts({
      price: { amountType: 'fixed', priceAmount: 1999, currency: 'usd' },
      recurring: true,
      discount: { terms: { type: 'percentage', basis_points: 2500 }, appliesToProduct: true },
      taxBasisPoints: 2000,
    });
    // 19.99 − 25 % (4.9975 → 5.00) = 14.99; tax 20 % = 2.998 → 3.00; total 17.99
    expect(a).toMatchObject({ amount: 1999, discount_amount: 500, net_amount: 1499, tax_amount: 300, total_amount: 1799 });
    expect(a).toMatchObject({ is_payment_required: true, is_payment_setup_required: true, is_discount_applicable: true });
  });

  it('treats free prices as needing no payment and no discount', () => {
    const a = checkoutAmounts({
      price: { amountType: 'free', currency: 'usd' },
      recurring: true,
      discount: { terms: { type: 'fixed', amount: 500 }, appliesToProduct: true },
    });
    expect(a).toMatchObject({ amount: 0, total_amount: 0, is_free_product_price: true, is_discount_applicable: false });
    expect(a.is_payment_form_required).toBe(false);
  });

  it('takes a custom amount within bounds, else the preset, else 1000', () => {
    const custom = { amountType: 'custom' as const, minimumAmount: 500, maximumAmount: 10_000, presetAmount: 2500, currency: 'usd' };
    expect(priceAmount(custom, 700)).toBe(700);
    expect(priceAmount(custom)).toBe(2500);
    expect(priceAmount({ ...custom, presetAmount: null, minimumAmount: null })).toBe(1000);
    expect(() => priceAmount(custom, 499)).toThrow(PricingError);
    expect(() => priceAmount(custom, 10_001)).toThrow(/at most 10000/);
  });
});

describe('billing periods', () => {
  it('keep the anchor day through short months', () => {
    const start = new Date('2024-01-31T10:00:00Z');
    const ends = [1, 2, 3, 13].map((n) => addMonths(start, n).toISOString().slice(0, 10));
    expect(ends).toEqual(['2024-02-29', '2024-03-31', '2024-04-30', '2025-02-28']);
    expect(cycleStart(new Date('2024-02-29T00:00:00Z'), 'year', 1).toISOString().slice(0, 10)).toBe('2025-02-28');
    expect(cycleStart(new Date('2024-02-29T00:00:00Z'), 'year', 4).toISOString().slice(0, 10)).toBe('2028-02-29');
  });

  it('always move forward and twelve months make a year', () => {
    fc.assert(
      fc.property(date, fc.integer({ min: 1, max: 48 }), (start, n) => {
        const later = addMonths(start, n);
        const year = addMonths(start, 12);
        return later > start && year.getUTCFullYear() === start.getUTCFullYear() + 1 && cycleStart(start, 'month', 12).getTime() === year.getTime();
      }),
    );
  });
});

describe('discount durations', () => {
  it('apply a repeating discount to exactly its number of monthly periods, whatever the start day', () => {
    fc.assert(
      fc.property(date, fc.integer({ min: 1, max: 12 }), (start, months) => {
        let discounted = 0;
        for (let cycle = 0; cycle < 24; cycle++) {
          if (discountApplies({ duration: 'repeating', durationInMonths: months }, start, cycleStart(start, 'month', cycle), cycle === 0)) discounted++;
        }
        return discounted === months;
      }),
    );
  });

  it('apply once to the first period and forever to all', () => {
    const start = new Date('2025-05-31T00:00:00Z');
    const periods = [0, 1, 2].map((c) => cycleStart(start, 'month', c));
    expect(periods.map((p, i) => discountApplies({ duration: 'once' }, start, p, i === 0))).toEqual([true, false, false]);
    expect(periods.map((p, i) => discountApplies({ duration: 'forever' }, start, p, i === 0))).toEqual([true, true, true]);
  });
});

describe('proration', () => {
  it('credits and debits add up to the price difference times the factor, within a cent each', () => {
    fc.assert(
      fc.property(money, money, date, fc.double({ min: 0, max: 1, noNaN: true }), (oldAmount, newAmount, start, at) => {
        const end = addMonths(start, 1);
        const when = new Date(start.getTime() + Math.floor((end.getTime() - start.getTime()) * at));
        const f = prorationFactor(when, start, end);
        const { credit, debit, net } = prorate(oldAmount, newAmount, f);
        const exact = (Number(f.remaining) / Number(f.total)) * (newAmount - oldAmount);
        return credit <= 0 && -credit <= oldAmount && debit >= 0 && debit <= newAmount && net === credit + debit && Math.abs(net - exact) <= 1;
      }),
    );
  });

  it('is the whole difference at the start of a period and nothing at its end', () => {
    const start = new Date('2025-03-01T00:00:00Z');
    const end = addMonths(start, 1);
    expect(prorate(1000, 3000, prorationFactor(start, start, end))).toEqual({ credit: -1000, debit: 3000, net: 2000 });
    expect(prorate(1000, 3000, prorationFactor(end, start, end))).toEqual({ credit: -0, debit: 0, net: 0 });
  });
});

describe('refund tax', () => {
  it('never refunds more than was paid, and a full refund returns all the tax', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1_000_000 }), bp, fc.array(fc.integer({ min: 1, max: 1_000_000 }), { maxLength: 8 }), (net, rate, parts) => {
        const order = { netAmount: net, taxAmount: taxOn(net, rate), refundedAmount: 0, refundedTaxAmount: 0 };
        for (const p of parts) {
          const remaining = order.netAmount - order.refundedAmount;
          if (remaining === 0) break;
          const amount = Math.min(p, remaining);
          order.refundedTaxAmount += refundTax(order, amount);
          order.refundedAmount += amount;
          if (order.refundedTaxAmount > order.taxAmount || order.refundedAmount > order.netAmount) return false;
        }
        const rest = order.netAmount - order.refundedAmount;
        if (rest > 0) {
          order.refundedTaxAmount += refundTax(order, rest);
          order.refundedAmount += rest;
        }
        return order.refundedAmount === order.netAmount && order.refundedTaxAmount === order.taxAmount;
      }),
    );
  });

  it('refuses refunding more than remains', () => {
    expect(() => refundTax({ netAmount: 1000, taxAmount: 200, refundedAmount: 900, refundedTaxAmount: 180 }, 101)).toThrow(PricingError);
  });
});

describe('renewal cycles', () => {
  const terms = discount;
  const duration = fc.oneof(
    fc.constant({ duration: 'once' as const }),
    fc.constant({ duration: 'forever' as const }),
    fc.integer({ min: 1, max: 24 }).map((durationInMonths) => ({ duration: 'repeating' as const, durationInMonths })),
  );
  const proration = fc.integer({ min: -20_000_000, max: 20_000_000 });

  it('never lose or create a cent across a year of cycles with prorations carried forward', () => {
    fc.assert(
      fc.property(money, terms, duration, date, fc.array(proration, { minLength: 12, maxLength: 12 }), bp, (price, t, dur, start, changes, tax) => {
        let carried = 0;
        let billedNet = 0;
        let expected = 0;
        for (let cycle = 0; cycle < 12; cycle++) {
          const a = cycleAmounts({
            priceAmount: price,
            discount: { terms: t, duration: dur, appliedAt: start },
            periodStart: cycleStart(start, 'month', cycle),
            isFirstPeriod: cycle === 0,
            proration: carried + changes[cycle]!,
            taxBasisPoints: tax,
          });
          if (a.net < 0 || a.carry > 0 || a.subtotal - a.discount !== a.net || a.total !== a.net + a.tax) return false;
          billedNet += a.net;
          expected += price - a.discount + changes[cycle]!;
          carried = a.carry;
        }
        // What was billed plus the credit still owed to the customer is exactly price − discounts + changes.
        return billedNet + carried === expected;
      }),
    );
  });

  it('applies a 3-month repeating 25 % discount to the first three monthly orders only', () => {
    const start = new Date('2026-01-31T10:00:00Z');
    const nets = Array.from({ length: 12 }, (_, cycle) =>
      cycleAmounts({
        priceAmount: 1999,
        discount: { terms: { type: 'percentage', basis_points: 2500 }, duration: { duration: 'repeating', durationInMonths: 3 }, appliedAt: start },
        periodStart: cycleStart(start, 'month', cycle),
        isFirstPeriod: cycle === 0,
        proration: 0,
      }).net,
    );
    expect(nets).toEqual([1499, 1499, 1499, ...Array(9).fill(1999)]);
  });

  it('carries a credit larger than the cycle to the next one', () => {
    const a = cycleAmounts({ priceAmount: 1000, discount: null, periodStart: new Date(), isFirstPeriod: false, proration: -1500 });
    expect(a).toMatchObject({ subtotal: 0, discount: 0, net: 0, total: 0, carry: -500 });
  });
});
