/** Product and price wire shapes, their one-line labels, and the form ↔ API conversion of prices. */
import { formatMoney, toMajor, toMinor, fractionDigits } from '../../common/money.tsx';

export type AmountType = 'fixed' | 'custom' | 'free' | 'metered_unit';

export interface Price {
  id: string;
  amount_type: AmountType;
  price_amount?: number;
  price_currency?: string;
  minimum_amount?: number | null;
  maximum_amount?: number | null;
  preset_amount?: number | null;
  unit_amount?: string;
  cap_amount?: number | null;
  meter_id?: string;
  meter?: { id: string; name: string };
  is_archived?: boolean;
}

export interface Benefit {
  id: string;
  type: string;
  description: string;
}

export interface Product {
  id: string;
  created_at: string;
  modified_at: string | null;
  name: string;
  description: string | null;
  recurring_interval: 'month' | 'year' | null;
  trial_interval: 'day' | 'week' | 'month' | 'year' | null;
  trial_interval_count: number | null;
  is_recurring: boolean;
  is_archived: boolean;
  organization_id: string;
  metadata: Record<string, string | number | boolean>;
  prices: Price[];
  benefits: Benefit[];
  medias: { id: string; name: string; public_url?: string | null; mime_type: string }[];
  attached_custom_fields: { custom_field_id: string; required: boolean; custom_field: { name: string } }[];
}

/** "USD 19.00", "Free", "Pay what you want (min. USD 5.00)" or "USD 0.10 per unit (API calls)"; amounts are minor units. */
export function formatPrice(price: Price | undefined): string {
  if (!price) return '—';
  const cur = price.price_currency ?? 'usd';
  switch (price.amount_type) {
    case 'free':
      return 'Free';
    case 'custom': {
      const bounds = [
        price.minimum_amount != null ? `min. ${formatMoney(price.minimum_amount, cur)}` : null,
        price.maximum_amount != null ? `max. ${formatMoney(price.maximum_amount, cur)}` : null,
      ].filter(Boolean);
      return `Pay what you want${bounds.length ? ` (${bounds.join(', ')})` : ''}`;
    }
    case 'metered_unit':
      return `${cur.toUpperCase()} ${shiftDecimal(price.unit_amount ?? '0', -fractionDigits(cur))} per unit${price.meter ? ` of ${price.meter.name}` : ''}${price.cap_amount != null ? `, capped at ${formatMoney(price.cap_amount, cur)}` : ''}`;
    default:
      return formatMoney(price.price_amount ?? 0, cur);
  }
}

/** Moves the decimal point of a decimal string (exact, no floating point): ("0.5", 2) → "50". */
export function shiftDecimal(value: string, places: number): string {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(String(value).trim());
  if (!m) return String(value);
  let digits = (m[1] ?? '') + (m[2] ?? '');
  let point = (m[1] ?? '').length + places;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  }
  if (point > digits.length) digits = digits + '0'.repeat(point - digits.length);
  const int = digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0';
  const frac = digits.slice(point).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}

/** A price as the form holds it: amounts in major units. */
export interface PriceForm {
  id?: string;
  amount_type: AmountType;
  price_currency?: string;
  price_amount?: number | null;
  minimum_amount?: number | null;
  maximum_amount?: number | null;
  preset_amount?: number | null;
  meter_id?: string;
  unit_amount?: string | number | null;
  cap_amount?: number | null;
  summary?: string;
}

export function priceToForm(price: Price): PriceForm {
  return { id: price.id, amount_type: price.amount_type, price_currency: price.price_currency, summary: formatPrice(price) };
}

/** Form price → create body (or `{id}` to keep an existing one). */
export function priceFromForm(p: PriceForm): Record<string, unknown> {
  if (p.id) return { id: p.id };
  const currency = (p.price_currency || 'usd').toLowerCase();
  switch (p.amount_type) {
    case 'free':
      return { amount_type: 'free' };
    case 'custom':
      return {
        amount_type: 'custom',
        price_currency: currency,
        minimum_amount: toMinor(p.minimum_amount, currency),
        maximum_amount: toMinor(p.maximum_amount, currency),
        preset_amount: toMinor(p.preset_amount, currency),
      };
    case 'metered_unit':
      return {
        amount_type: 'metered_unit',
        price_currency: currency,
        meter_id: p.meter_id,
        unit_amount: shiftDecimal(String(p.unit_amount ?? ''), fractionDigits(currency)),
        cap_amount: toMinor(p.cap_amount, currency),
      };
    default:
      return { amount_type: 'fixed', price_currency: currency, price_amount: toMinor(p.price_amount, currency) };
  }
}

export { toMajor };

export function formatInterval(interval: Product['recurring_interval']): string {
  return interval === 'month' ? 'Monthly' : interval === 'year' ? 'Yearly' : 'One-time';
}
