/**
 * Money and dates, in one place. Amounts travel as integer minor units with an ISO 4217 currency;
 * people read and type them in major units, formatted by Intl in the browser's locale.
 */
import { useRecordContext, type FieldProps } from 'react-admin';
import { Typography } from '@mui/material';

const digitsCache = new Map<string, number>();

/** How many minor digits the currency has (2 for USD, 0 for JPY, 3 for KWD). */
export function fractionDigits(currency: string): number {
  const code = (currency || 'usd').toUpperCase();
  let digits = digitsCache.get(code);
  if (digits === undefined) {
    try {
      digits = new Intl.NumberFormat('en', { style: 'currency', currency: code }).resolvedOptions().maximumFractionDigits ?? 2;
    } catch {
      digits = 2;
    }
    digitsCache.set(code, digits);
  }
  return digits;
}

/** 4900 usd → "USD 49.00" (the currency code, never an ambiguous "$"). */
export function formatMoney(minor: number | null | undefined, currency: string | null | undefined): string {
  if (minor === null || minor === undefined) return '—';
  const code = (currency || 'usd').toUpperCase();
  const digits = fractionDigits(code);
  try {
    return new Intl.NumberFormat(undefined, { style: 'currency', currency: code, currencyDisplay: 'code' }).format(
      minor / 10 ** digits,
    );
  } catch {
    return `${code} ${(minor / 10 ** digits).toFixed(digits)}`;
  }
}

/** Major units typed in a form → integer minor units. */
export const toMinor = (major: number | string | null | undefined, currency: string | null | undefined): number | null =>
  major === null || major === undefined || major === '' ? null : Math.round(Number(major) * 10 ** fractionDigits(currency ?? 'usd'));

/** Integer minor units → major units for a form. */
export const toMajor = (minor: number | null | undefined, currency: string | null | undefined): number | null =>
  minor === null || minor === undefined ? null : minor / 10 ** fractionDigits(currency ?? 'usd');

/** A date-time input's local value → ISO 8601 with an offset, as the API requires (empty → null). */
export const toIsoDateTime = (value: string | Date | null | undefined): string | null =>
  value ? new Date(value).toISOString() : null;

export function formatDate(value: string | null | undefined, withTime = true): string {
  if (!value) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  return withTime ? d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : d.toLocaleDateString(undefined, { dateStyle: 'medium' });
}

interface MoneyFieldProps extends FieldProps {
  /** Record key of the currency; defaults to `currency`. */
  currencySource?: string;
}

const get = (record: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), record);

/** An amount of the record in the record's own currency. */
export const MoneyField = ({ source, currencySource = 'currency' }: MoneyFieldProps & { source: string }) => {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <Typography component="span" variant="body2" sx={{ fontVariantNumeric: 'tabular-nums', whiteSpace: 'nowrap' }}>
      {formatMoney(get(record, source) as number | null, get(record, currencySource) as string)}
    </Typography>
  );
};

/** A date (and time) of the record in the browser's locale. */
export const DateTimeField = ({ source, withTime = true }: FieldProps & { source: string; withTime?: boolean }) => {
  const record = useRecordContext();
  if (!record) return null;
  return (
    <Typography component="span" variant="body2" sx={{ whiteSpace: 'nowrap' }}>
      {formatDate(get(record, source) as string | null, withTime)}
    </Typography>
  );
};
