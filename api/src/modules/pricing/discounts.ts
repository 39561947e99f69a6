/**
 * Pure discount arithmetic, in integer minor units.
 * - percentage: amount × basis_points / 10000, rounded half away from zero;
 * - fixed: min(amount, discount amount), never more than the amount itself.
 */

export type DiscountTerms =
  | { type: 'percentage'; basis_points: number }
  | { type: 'fixed'; amount: number };

function assertInteger(name: string, value: number): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be a safe integer, got ${value}`);
}

/** Divides `numerator` by a positive `denominator`, rounding half away from zero (exact, in BigInt). */
export function divideRoundHalfAwayFromZero(numerator: bigint, denominator: bigint): bigint {
  if (denominator <= 0n) throw new RangeError('denominator must be positive');
  const negative = numerator < 0n;
  const abs = negative ? -numerator : numerator;
  let q = abs / denominator;
  if ((abs % denominator) * 2n >= denominator) q += 1n;
  return negative ? -q : q;
}

/** The discount, in minor units, that `discount` takes off `amount` (minor units). */
export function discountAmount(amount: number, discount: DiscountTerms): number {
  assertInteger('amount', amount);
  if (discount.type === 'percentage') {
    assertInteger('basis_points', discount.basis_points);
    if (discount.basis_points < 0 || discount.basis_points > 10_000) {
      throw new RangeError('basis_points must be between 0 and 10000');
    }
    return Number(divideRoundHalfAwayFromZero(BigInt(amount) * BigInt(discount.basis_points), 10_000n));
  }
  assertInteger('discount amount', discount.amount);
  if (discount.amount < 0) throw new RangeError('discount amount must not be negative');
  return Math.min(amount, discount.amount);
}
