import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { discountAmount, divideRoundHalfAwayFromZero } from './discounts.ts';

const amount = fc.integer({ min: 0, max: 99_999_999 });
const basisPoints = fc.integer({ min: 1, max: 10_000 });

describe('discountAmount', () => {
  it('percentage: an integer within half a unit of the exact value, ties away from zero', () => {
    fc.assert(
      fc.property(amount, basisPoints, (a, bp) => {
        const d = discountAmount(a, { type: 'percentage', basis_points: bp });
        expect(Number.isInteger(d)).toBe(true);
        // |d − a·bp/10000| ≤ 1/2, scaled by 10000 to stay in integers.
        const diff = d * 10_000 - a * bp;
        expect(Math.abs(diff)).toBeLessThanOrEqual(5_000);
        // An exact half always rounds up (away from zero for non-negative amounts).
        if (Math.abs(diff) === 5_000) expect(diff).toBe(5_000);
      }),
    );
  });

  it('percentage: never negative, never more than the amount; 100% is the whole amount', () => {
    fc.assert(
      fc.property(amount, basisPoints, (a, bp) => {
        const d = discountAmount(a, { type: 'percentage', basis_points: bp });
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThanOrEqual(a);
        expect(discountAmount(a, { type: 'percentage', basis_points: 10_000 })).toBe(a);
      }),
    );
  });

  it('percentage: monotonic in the amount and in the basis points', () => {
    fc.assert(
      fc.property(amount, amount, basisPoints, basisPoints, (a1, a2, bp1, bp2) => {
        const [lo, hi] = a1 <= a2 ? [a1, a2] : [a2, a1];
        const [blo, bhi] = bp1 <= bp2 ? [bp1, bp2] : [bp2, bp1];
        expect(discountAmount(lo, { type: 'percentage', basis_points: blo })).toBeLessThanOrEqual(
          discountAmount(hi, { type: 'percentage', basis_points: blo }),
        );
        expect(discountAmount(lo, { type: 'percentage', basis_points: blo })).toBeLessThanOrEqual(
          discountAmount(lo, { type: 'percentage', basis_points: bhi }),
        );
      }),
    );
  });

  it('percentage: negative amounts mirror positive ones (half away from zero)', () => {
    fc.assert(
      fc.property(amount, basisPoints, (a, bp) => {
        // (+ 0 folds -0 into 0.)
        expect(discountAmount(-a, { type: 'percentage', basis_points: bp }) + 0).toBe(
          -discountAmount(a, { type: 'percentage', basis_points: bp }) + 0,
        );
      }),
    );
  });

  it('percentage: known values', () => {
    expect(discountAmount(1000, { type: 'percentage', basis_points: 2550 })).toBe(255);
    expect(discountAmount(1, { type: 'percentage', basis_points: 5000 })).toBe(1); // 0.5 → 1
    expect(discountAmount(3, { type: 'percentage', basis_points: 5000 })).toBe(2); // 1.5 → 2
    expect(discountAmount(1, { type: 'percentage', basis_points: 4999 })).toBe(0); // 0.4999 → 0
    expect(discountAmount(-1, { type: 'percentage', basis_points: 5000 })).toBe(-1);
    expect(discountAmount(99_999_999, { type: 'percentage', basis_points: 3333 })).toBe(33_330_000);
  });

  it('fixed: min(amount, discount)', () => {
    fc.assert(
      fc.property(amount, fc.integer({ min: 1, max: 99_999_999 }), (a, off) => {
        const d = discountAmount(a, { type: 'fixed', amount: off });
        expect(d).toBe(Math.min(a, off));
        expect(a - d).toBeGreaterThanOrEqual(0);
      }),
    );
    expect(discountAmount(500, { type: 'fixed', amount: 1000 })).toBe(500);
    expect(discountAmount(1500, { type: 'fixed', amount: 1000 })).toBe(1000);
  });

  it('refuses non-integers and out-of-range basis points', () => {
    fc.assert(
      fc.property(
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
        (x) => {
          expect(() => discountAmount(x, { type: 'fixed', amount: 1 })).toThrow(RangeError);
          expect(() => discountAmount(100, { type: 'fixed', amount: x })).toThrow(RangeError);
          expect(() => discountAmount(100, { type: 'percentage', basis_points: x })).toThrow(RangeError);
        },
      ),
    );
    expect(() => discountAmount(100, { type: 'percentage', basis_points: 10_001 })).toThrow(RangeError);
    expect(() => discountAmount(100, { type: 'percentage', basis_points: -1 })).toThrow(RangeError);
  });
});

describe('divideRoundHalfAwayFromZero', () => {
  it('agrees with Math.round on the absolute value for exactly representable quotients', () => {
    fc.assert(
      fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), fc.integer({ min: 1, max: 1000 }), (n, d) => {
        const expected = Math.sign(n) * Math.round(Math.abs(n) / d);
        expect(Number(divideRoundHalfAwayFromZero(BigInt(n), BigInt(d)))).toBe(expected === 0 ? 0 : expected);
      }),
    );
  });
});
