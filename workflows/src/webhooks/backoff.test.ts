import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { backoffMs } from './webhook-delivery.workflow.ts';

describe('webhook retry backoff', () => {
  it('doubles from the base, stays within ±25 % jitter and never exceeds the cap by more than the jitter', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 30 }), fc.double({ min: 0, max: 0.999999, noNaN: true }), (attempt, r) => {
        const d = backoffMs(attempt, 2000, 1_200_000, r);
        const nominal = Math.min(2000 * 2 ** (attempt - 1), 1_200_000);
        return d >= Math.floor(nominal * 0.75) && d <= Math.ceil(nominal * 1.25);
      }),
    );
    expect(backoffMs(1, 2000, 1_200_000, 0.5)).toBe(2000);
    expect(backoffMs(3, 2000, 1_200_000, 0.5)).toBe(8000);
    expect(backoffMs(20, 2000, 1_200_000, 0.5)).toBe(1_200_000);
  });
});
