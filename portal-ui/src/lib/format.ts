/** Money, dates and intervals in the browser's language. */

const locale = () => (typeof navigator !== 'undefined' ? navigator.language : undefined);

function currencyFormat(currency: string, opts: Intl.NumberFormatOptions = {}) {
  return new Intl.NumberFormat(locale(), { style: 'currency', currency: currency.toUpperCase(), ...opts });
}

/** Digits after the decimal point of a currency (2 for USD, 0 for JPY). */
export function currencyDigits(currency: string): number {
  try {
    return currencyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** Formats integer minor units (cents) in the currency's own precision, e.g. 1900 usd → "$19.00". */
export function formatMoney(minor: number, currency: string): string {
  try {
    return currencyFormat(currency).format(minor / 10 ** currencyDigits(currency));
  } catch {
    return `${currency.toUpperCase()} ${(minor / 100).toFixed(2)}`;
  }
}

/** "19.5" in the currency's major unit → 1950 minor units; null when not a number. */
export function parseMajor(input: string, currency: string): number | null {
  const cleaned = input.replace(/[^\d.,-]/g, '').replace(',', '.');
  if (!cleaned || !/^-?\d*(\.\d*)?$/.test(cleaned)) return null;
  const n = Number(cleaned);
  if (!Number.isFinite(n)) return null;
  return Math.round(n * 10 ** currencyDigits(currency));
}

export function toMajorInput(minor: number, currency: string): string {
  const d = currencyDigits(currency);
  return (minor / 10 ** d).toFixed(d);
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium' }).format(new Date(iso));
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Intl.DateTimeFormat(locale(), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso));
}

export function intervalLabel(interval: string | null | undefined): string {
  if (interval === 'month') return 'month';
  if (interval === 'year') return 'year';
  if (interval === 'week') return 'week';
  if (interval === 'day') return 'day';
  return '';
}

/** "$19.00 / month" for a recurring amount, "$19.00" otherwise. */
export function formatRecurring(minor: number, currency: string, interval: string | null | undefined): string {
  const money = formatMoney(minor, currency);
  return interval ? `${money} / ${intervalLabel(interval)}` : money;
}

export function countryName(code: string): string {
  try {
    return new Intl.DisplayNames(locale(), { type: 'region' }).of(code) ?? code;
  } catch {
    return code;
  }
}

/** A quantity of units: up to 6 decimals, grouped ("1,902"), a true minus sign for negatives. */
export function formatQuantity(n: number): string {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: 6 }).format(n);
}

/**
 * A unit price given in minor units as a decimal string ("0.5" usd → "$0.005"): every digit it has,
 * at least the currency's own.
 */
export function formatUnitAmount(minorDecimal: string, currency: string): string {
  const digits = currencyDigits(currency);
  const fraction = minorDecimal.includes('.') ? minorDecimal.split('.')[1]!.replace(/0+$/, '').length : 0;
  const major = Number(minorDecimal) / 10 ** digits;
  try {
    return currencyFormat(currency, { minimumFractionDigits: digits, maximumFractionDigits: Math.min(20, digits + fraction) }).format(major);
  } catch {
    return `${currency.toUpperCase()} ${major}`;
  }
}
