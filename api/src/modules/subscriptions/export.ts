/** The seller's subscriptions as CSV (`GET /v1/subscriptions/export`). */
import type { Subscription } from './entities.ts';

const HEADER = [
  'id', 'email', 'name', 'created_at', 'status', 'active', 'product', 'amount', 'currency', 'interval',
  'current_period_end', 'cancel_at_period_end', 'ended_at',
];

/** RFC 4180 quoting; a leading =, +, - or @ is neutralised so spreadsheets never evaluate a cell. */
export function csvCell(v: string | number | boolean | null | undefined): string {
  if (v == null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Needs customer, product and price loaded. Amounts in minor units, as the API gives them. */
export function subscriptionsCsv(items: Subscription[]): string {
  const rows = items.map((s) =>
    [
      s.id,
      s.customer.email,
      s.customer.name ?? '',
      s.createdAt.toISOString(),
      s.status,
      s.status === 'active' || s.status === 'trialing',
      s.product.name,
      s.amount,
      s.currency,
      s.recurringInterval,
      s.currentPeriodEnd?.toISOString() ?? '',
      s.cancelAtPeriodEnd,
      s.endedAt?.toISOString() ?? '',
    ].map(csvCell),
  );
  return [HEADER, ...rows].map((r) => r.join(',')).join('\r\n') + '\r\n';
}
