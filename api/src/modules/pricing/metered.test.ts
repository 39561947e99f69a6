/**
 * Metered line arithmetic (pricing/metered.ts) and the renewal order's amounts with usage
 * (cycleAmounts + allocate): property tests against an independent rational reference.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocate, formatDecimal, meteredLine, parseDecimal } from './metered.ts';
import { cycleAmounts } from './index.ts';

/** A decimal string with up to `scale` fraction digits, and its exact value as [numerator, 10^scale]. */
const decimal = (maxInt: number, scale: number) =>
  fc.tuple(fc.integer({ min: 0, max: maxInt }), fc.integer({ min: 0, max: 10 ** scale - 1 })).map(([i, f]) => {
    const str = scale ? `${i}.${String(f).padStart(scale, '0')}` : String(i);
    return { str, num: BigInt(i) * 10n ** BigInt(scale) + BigInt(scale ? f : 0), den: 10n ** BigInt(scale) };
  });

/** round(n / d) half away from zero for n ≥ 0, d > 0 (reference). */
const roundHalfUp = (n: bigint, d: bigint) => (2n * n + d) / (2n * d);

describe('meteredLine', () => {
  it('is min(cap, round(max(0, usage − credits) × unit)) for any inputs, credits used first', () => {
    fc.assert(
      fc.property(
        decimal(10_000_000, 6),
        fc.integer({ min: -1000, max: 10_000_000 }),
        decimal(100_000, 12),
        fc.option(fc.integer({ min: 0, max: 1_000_000_000 })),
        (usage, credits, unit, cap) => {
          const line = meteredLine({ usage: usage.str, creditBalance: credits, unitAmount: unit.str, capAmount: cap });
          // Reference in rationals: billable = max(0, u − max(0, c)).
          const c = BigInt(Math.max(0, credits)) * usage.den;
          const billableNum = usage.num > c ? usage.num - c : 0n;
          const expected = roundHalfUp(billableNum * unit.num, usage.den * unit.den);
          const capped = cap != null && expected > BigInt(cap) ? BigInt(cap) : expected;
          expect(BigInt(line.amount)).toBe(capped);
          expect(line.capped).toBe(cap != null && expected > BigInt(cap));
          // Credits used = min(balance, usage); billable + used = usage.
          const used = parseDecimal(line.creditsUsed);
          const usedExact = (used.units * usage.den) / 10n ** BigInt(used.scale);
          expect(usedExact).toBe(usage.num < c ? usage.num : c);
          expect(formatDecimal(parseDecimal(line.usage))).toBe(formatDecimal(parseDecimal(usage.str)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('rounds once per line, half away from zero, and documents examples', () => {
    expect(meteredLine({ usage: '1234', creditBalance: 0, unitAmount: '0.25', capAmount: null }).amount).toBe(309); // 308.5
    expect(meteredLine({ usage: '10', creditBalance: 0, unitAmount: '0.25', capAmount: null }).amount).toBe(3); // 2.5
    expect(meteredLine({ usage: '3', creditBalance: 0, unitAmount: '0.333333333333', capAmount: null }).amount).toBe(1);
    expect(meteredLine({ usage: '210', creditBalance: 100, unitAmount: '12.5', capAmount: 10_000 })).toMatchObject({ amount: 1375, creditsUsed: '100', billableUnits: '110' });
    expect(meteredLine({ usage: '1004', creditBalance: 0, unitAmount: '12.5', capAmount: 10_000 })).toMatchObject({ amount: 10_000, capped: true, uncappedAmount: 12_550 });
    expect(meteredLine({ usage: '-5', creditBalance: 10, unitAmount: '1', capAmount: null })).toMatchObject({ amount: 0, usage: '0', creditsUsed: '0' });
    expect(meteredLine({ usage: '2.5', creditBalance: 10, unitAmount: '7', capAmount: null })).toMatchObject({ amount: 0, creditsUsed: '2.5' });
  });
});

describe('allocate', () => {
  it('splits any total over any non-negative weights exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e9 }), fc.array(fc.integer({ min: 0, max: 1e9 }), { minLength: 1, maxLength: 8 }), (total, weights) => {
        const parts = allocate(total, weights);
        expect(parts.reduce((a, b) => a + b, 0)).toBe(total);
        const sum = weights.reduce((a, b) => a + b, 0);
        if (sum > 0) parts.forEach((p, i) => expect(Math.abs(p * sum - total * weights[i]!)).toBeLessThan(sum));
      }),
    );
  });
});

describe('a renewal order with usage', () => {
  it('has lines (price, usage, proration) that sum to its subtotal, and discount and tax that split over them', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 4 }),
        fc.integer({ min: -2_000_000, max: 1_000_000 }),
        fc.option(fc.integer({ min: 0, max: 10_000 })),
        fc.integer({ min: 0, max: 5000 }),
        (price, usageLines, proration, bp, taxBp) => {
          const metered = usageLines.reduce((a, b) => a + b, 0);
          const a = cycleAmounts({
            priceAmount: price,
            discount: bp == null ? null : { terms: { type: 'percentage', basis_points: bp }, duration: { duration: 'forever' }, appliedAt: new Date(0) },
            periodStart: new Date(1000),
            isFirstPeriod: false,
            proration,
            taxBasisPoints: taxBp,
            meteredAmount: metered,
          });
          // The lines as subscriptions/service.ts quoteCycle builds them.
          const lines = [price, ...usageLines];
          const prorationUsed = proration - a.carry;
          const all = prorationUsed !== 0 ? [...lines, prorationUsed] : lines;
          expect(all.reduce((x, y) => x + y, 0)).toBe(a.subtotal);
          expect(a.subtotal - a.discount).toBe(a.net);
          expect(a.net + a.tax).toBe(a.total);
          const discounts = allocate(a.discount, lines);
          expect(discounts.reduce((x, y) => x + y, 0)).toBe(a.discount);
          const taxes = allocate(a.tax, all.map((l, i) => Math.max(l - (discounts[i] ?? 0), 0)));
          expect(taxes.reduce((x, y) => x + y, 0)).toBe(a.tax);
        },
      ),
      { numRuns: 500 },
    );
  });
});
