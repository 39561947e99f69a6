/**
 * Metered (usage-based) amounts, exact: quantities and unit amounts are decimal strings turned into
 * scaled BigInts (value = units / 10^scale), never floats.
 *
 * One usage line = min(cap, round(max(0, usage − credits) × unit_amount)), where the product is exact
 * and rounded once, half away from zero, to an integer number of minor units; the cap (minor units,
 * optional) applies to the rounded amount. Credits are consumed before anything is billed:
 * credits used = min(max(0, balance), usage).
 */
import { divideRoundHalfAwayFromZero } from './discounts.ts';

/** An exact decimal: `units / 10^scale`. */
export interface Decimal {
  units: bigint;
  scale: number;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** Parses a plain decimal string ("12", "-0.5", "3.000000000001"); numbers must be safe integers or finite. */
export function parseDecimal(value: string | number | bigint): Decimal {
  if (typeof value === 'bigint') return { units: value, scale: 0 };
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`);
    if (Number.isSafeInteger(value)) return { units: BigInt(value), scale: 0 };
    value = value.toString();
    if (/e/i.test(value)) throw new RangeError(`decimal out of range: ${value}`);
  }
  const m = DECIMAL.exec(value.trim());
  if (!m) throw new RangeError(`not a decimal: ${value}`);
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const units = BigInt(`${m[2]}${frac}`) * (m[1] ? -1n : 1n);
  return { units, scale: frac.length };
}

const pow10 = (n: number) => 10n ** BigInt(n);

function align(a: Decimal, b: Decimal): [bigint, bigint, number] {
  const scale = Math.max(a.scale, b.scale);
  return [a.units * pow10(scale - a.scale), b.units * pow10(scale - b.scale), scale];
}

export function subtractDecimal(a: Decimal, b: Decimal): Decimal {
  const [x, y, scale] = align(a, b);
  return normalize({ units: x - y, scale });
}

export function compareDecimal(a: Decimal, b: Decimal): number {
  const [x, y] = align(a, b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export const minDecimal = (a: Decimal, b: Decimal) => (compareDecimal(a, b) <= 0 ? a : b);
export const maxDecimal = (a: Decimal, b: Decimal) => (compareDecimal(a, b) >= 0 ? a : b);
export const ZERO: Decimal = { units: 0n, scale: 0 };

function normalize(d: Decimal): Decimal {
  let { units, scale } = d;
  while (scale > 0 && units % 10n === 0n) {
    units /= 10n;
    scale -= 1;
  }
  return { units, scale };
}

/** The canonical string of a decimal ("1.5", "-3", "0.000001"). */
export function formatDecimal(d: Decimal): string {
  const { units, scale } = normalize(d);
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const int = digits.slice(0, digits.length - scale);
  const frac = scale ? `.${digits.slice(digits.length - scale)}` : '';
  return `${negative ? '-' : ''}${int}${frac}`;
}

/** round(q × unit), half away from zero, in minor units (exact until that one rounding). */
export function multiplyRound(q: Decimal, unit: Decimal): number {
  const n = divideRoundHalfAwayFromZero(q.units * unit.units, pow10(q.scale + unit.scale));
  if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < BigInt(Number.MIN_SAFE_INTEGER)) throw new RangeError('amount out of range');
  return Number(n);
}

export interface MeteredLine {
  /** The period's aggregated usage (as billed: never negative). */
  usage: string;
  /** Credits consumed from the customer's balance. */
  creditsUsed: string;
  /** usage − credits used. */
  billableUnits: string;
  /** Before the cap. */
  uncappedAmount: number;
  /** Minor units: min(cap, round(billable × unit_amount)). */
  amount: number;
  capped: boolean;
}

/**
 * One metered line. `usage` is clamped at 0 (a meter summing negative values bills nothing, it never
 * credits), `creditBalance` at 0.
 */
export function meteredLine(input: {
  usage: string | number;
  creditBalance: string | number;
  unitAmount: string | number;
  capAmount: number | null;
}): MeteredLine {
  const usage = maxDecimal(parseDecimal(input.usage), ZERO);
  const balance = maxDecimal(parseDecimal(input.creditBalance), ZERO);
  const unit = parseDecimal(input.unitAmount);
  if (unit.units < 0n) throw new RangeError('unit_amount must not be negative');
  const creditsUsed = minDecimal(balance, usage);
  const billable = subtractDecimal(usage, creditsUsed);
  const uncapped = multiplyRound(billable, unit);
  if (input.capAmount != null && (!Number.isSafeInteger(input.capAmount) || input.capAmount < 0)) {
    throw new RangeError('cap_amount must be a non-negative integer');
  }
  const capped = input.capAmount != null && uncapped > input.capAmount;
  return {
    usage: formatDecimal(usage),
    creditsUsed: formatDecimal(creditsUsed),
    billableUnits: formatDecimal(billable),
    uncappedAmount: uncapped,
    amount: capped ? input.capAmount! : uncapped,
    capped,
  };
}

/**
 * Splits `total` over `weights` in proportion, so the parts sum to `total` exactly (largest
 * remainder; ties to the earlier weight). All weights 0: everything on the first. Used to show an
 * order's discount and tax per line.
 */
export function allocate(total: number, weights: number[]): number[] {
  if (!weights.length) return [];
  const sum = weights.reduce((a, b) => a + b, 0);
  if (sum === 0) return weights.map((_, i) => (i === 0 ? total : 0));
  const t = BigInt(total);
  const s = BigInt(sum);
  const raw = weights.map((w) => BigInt(w) * t);
  // Floor division toward −∞ for each share, then hand out the remainder one by one.
  const floor = (a: bigint, b: bigint) => {
    const q = a / b;
    return (a % b !== 0n && (a < 0n) !== (b < 0n)) ? q - 1n : q;
  };
  const parts = raw.map((r) => floor(r, s));
  const rema = raw.map((r, i) => r - parts[i]! * s);
  let left = t - parts.reduce((a, b) => a + b, 0n);
  const order = rema.map((r, i) => [r, i] as const).sort((a, b) => (a[0] === b[0] ? a[1] - b[1] : (s > 0n ? (b[0] > a[0] ? 1 : -1) : (a[0] > b[0] ? 1 : -1))));
  const step = left >= 0n ? 1n : -1n;
  for (let k = 0; left !== 0n; k = (k + 1) % order.length) {
    parts[order[k]![1]] = parts[order[k]![1]]! + step;
    left -= step;
  }
  return parts.map(Number);
}
