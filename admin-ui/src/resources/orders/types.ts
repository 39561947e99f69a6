export interface Order {
  id: string;
  created_at: string;
  status: 'pending' | 'paid' | 'refunded' | 'partially_refunded';
  paid: boolean;
  subtotal_amount: number;
  discount_amount: number;
  net_amount: number;
  amount: number;
  tax_amount: number;
  total_amount: number;
  refunded_amount: number;
  refunded_tax_amount: number;
  currency: string;
  billing_reason: string;
  billing_address: { line1?: string | null; city?: string | null; postal_code?: string | null; country: string } | null;
  customer_id: string;
  product_id: string;
  subscription_id: string | null;
  checkout_id: string | null;
  customer: { id: string; email: string; name: string | null };
  product: { id: string; name: string };
  discount: { id: string; name: string; code: string | null } | null;
  items: { id: string; label: string; amount: number; tax_amount: number; proration: boolean }[];
}

export interface Refund {
  id: string;
  created_at: string;
  status: 'pending' | 'succeeded' | 'failed' | 'canceled';
  reason: string;
  amount: number;
  tax_amount: number;
  currency: string;
  revoke_benefits: boolean;
}
