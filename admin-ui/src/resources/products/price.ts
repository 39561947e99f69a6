/** Price wire shape (subset) and its one-line label, shared by the product list and show views. */
export interface Price {
  id: string;
  amount_type: 'fixed' | 'custom' | 'free';
  price_amount?: number;
  price_currency?: string;
  is_archived?: boolean;
}

export interface Product {
  id: string;
  created_at: string;
  modified_at: string | null;
  name: string;
  description: string | null;
  recurring_interval: 'month' | 'year' | null;
  is_recurring: boolean;
  is_archived: boolean;
  organization_id: string;
  metadata: Record<string, string | number | boolean>;
  prices: Price[];
}

/** "USD 19.00", "Free" or "Pay what you want"; amounts are integer minor units. */
export function formatPrice(price: Price | undefined): string {
  if (!price) return '—';
  switch (price.amount_type) {
    case 'free':
      return 'Free';
    case 'custom':
      return 'Pay what you want';
    default:
      return `${(price.price_currency ?? '').toUpperCase()} ${((price.price_amount ?? 0) / 100).toFixed(2)}`;
  }
}

export const recurringIntervals = [
  { id: 'none', name: 'One-time' },
  { id: 'month', name: 'Monthly' },
  { id: 'year', name: 'Yearly' },
];

export function formatInterval(interval: Product['recurring_interval']): string {
  return recurringIntervals.find((i) => i.id === (interval ?? 'none'))?.name ?? String(interval);
}
