/** Invoice amounts: integer minor units shown in the currency's own decimals. */
import { describe, expect, it } from 'vitest';
import { currencyDigits, formatMoney, invoiceNumber } from '../../api/src/modules/orders/invoice.ts';

describe('invoice money formatting', () => {
  it('formats minor units with the currency symbol and decimals', () => {
    expect(formatMoney(2500, 'usd')).toBe('$25.00');
    expect(formatMoney(123456789, 'usd')).toBe('$1,234,567.89');
    expect(formatMoney(-250, 'usd')).toBe('-$2.50');
    expect(formatMoney(5, 'eur')).toBe('€0.05');
    expect(formatMoney(1000, 'jpy')).toBe('¥1,000');
    expect(formatMoney(0, 'gbp')).toBe('£0.00');
  });

  it('knows zero- and three-decimal currencies', () => {
    expect(currencyDigits('jpy')).toBe(0);
    expect(currencyDigits('usd')).toBe(2);
    expect(currencyDigits('kwd')).toBe(3);
    expect(formatMoney(1234, 'kwd')).toContain('1.234');
  });

  it('numbers invoices by date and order', () => {
    const n = invoiceNumber({ id: 'abcdef12-3456-7890-abcd-ef1234567890', createdAt: new Date('2026-03-04T10:00:00Z') });
    expect(n).toBe('INV-20260304-ABCDEF12');
  });
});
