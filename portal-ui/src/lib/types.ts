/** The parts of the API's read models the pages use (snake_case, as on the wire). */

export interface Organization {
  id: string;
  name: string;
  slug: string;
  avatar_url: string | null;
  subscription_settings?: { allow_customer_updates?: boolean; proration_behavior?: string } | null;
}

export type Price =
  | PriceCommon & { amount_type: 'fixed'; price_currency: string; price_amount: number }
  | PriceCommon & {
      amount_type: 'custom';
      price_currency: string;
      minimum_amount: number | null;
      maximum_amount: number | null;
      preset_amount: number | null;
    }
  | PriceCommon & { amount_type: 'free' }
  | PriceCommon & { amount_type: 'metered_unit'; price_currency: string; unit_amount: number; meter?: { name: string } };

interface PriceCommon {
  id: string;
  is_archived: boolean;
  type: 'one_time' | 'recurring';
  recurring_interval: string | null;
}

export interface Media {
  id: string;
  name: string;
  public_url?: string | null;
  mime_type?: string;
}

export interface Benefit {
  id: string;
  type: string;
  description: string;
  properties: Record<string, unknown>;
}

export interface CustomField {
  id: string;
  slug: string;
  name: string;
  type: 'text' | 'number' | 'date' | 'checkbox' | 'select';
  properties: {
    form_label?: string | null;
    form_help_text?: string | null;
    form_placeholder?: string | null;
    textarea?: boolean;
    min_length?: number | null;
    max_length?: number | null;
    ge?: number | null;
    le?: number | null;
    options?: { value: string; label: string }[];
  };
}

export interface AttachedCustomField {
  custom_field_id: string;
  custom_field: CustomField;
  order: number;
  required: boolean;
}

export interface Product {
  id: string;
  name: string;
  description: string | null;
  recurring_interval: string | null;
  is_recurring: boolean;
  prices: Price[];
  benefits: Benefit[];
  medias: Media[];
  organization?: Organization;
}

export interface Address {
  line1?: string | null;
  line2?: string | null;
  postal_code?: string | null;
  city?: string | null;
  state?: string | null;
  country: string;
}

export interface CheckoutDiscount {
  id: string;
  name: string;
  code: string | null;
  type: 'percentage' | 'fixed';
  basis_points?: number;
  amount?: number;
  currency?: string;
  duration: 'once' | 'forever' | 'repeating';
  duration_in_months?: number;
}

export interface Checkout {
  id: string;
  status: 'open' | 'expired' | 'confirmed' | 'succeeded' | 'failed';
  client_secret: string;
  url: string;
  expires_at: string;
  success_url: string;
  embed_origin: string | null;
  amount: number | null;
  discount_amount: number | null;
  net_amount: number | null;
  tax_amount: number | null;
  subtotal_amount: number | null;
  total_amount: number | null;
  currency: string | null;
  product_id: string;
  product_price_id: string;
  discount_id: string | null;
  allow_discount_codes: boolean;
  is_discount_applicable: boolean;
  is_free_product_price: boolean;
  is_payment_required: boolean;
  is_payment_setup_required: boolean;
  is_payment_form_required: boolean;
  active_trial_interval: 'day' | 'week' | 'month' | 'year' | null;
  active_trial_interval_count: number | null;
  trial_end: string | null;
  customer_name: string | null;
  customer_email: string | null;
  customer_billing_address: Address | null;
  customer_tax_id: string | null;
  custom_field_data: Record<string, string | number | boolean | null>;
  payment_processor_metadata: Record<string, string>;
  products: Product[];
  product: Product;
  product_price: Price;
  discount: CheckoutDiscount | null;
  organization: Organization;
  attached_custom_fields: AttachedCustomField[];
  customer_session_token?: string;
}

export interface PortalCustomer {
  id: string;
  email: string;
  name: string | null;
  billing_address: Address | null;
  tax_id: [string, string] | null;
}

export interface Order {
  id: string;
  created_at: string;
  status: string;
  paid: boolean;
  subtotal_amount: number;
  discount_amount: number;
  net_amount: number;
  tax_amount: number;
  total_amount: number;
  refunded_amount: number;
  currency: string;
  billing_reason: string;
  product: Product;
  subscription_id: string | null;
  checkout_id: string | null;
  items?: { label: string; amount: number; proration?: boolean }[];
}

export interface Subscription {
  id: string;
  created_at: string;
  amount: number;
  currency: string;
  recurring_interval: string;
  status: string;
  current_period_start: string;
  current_period_end: string | null;
  cancel_at_period_end: boolean;
  canceled_at: string | null;
  started_at: string | null;
  ends_at: string | null;
  ended_at: string | null;
  trial_start: string | null;
  trial_end: string | null;
  product_id: string;
  product: Product & { organization: Organization };
  price_id?: string;
  discount?: CheckoutDiscount | null;
}

export interface BenefitGrant {
  id: string;
  granted_at: string | null;
  is_granted: boolean;
  is_revoked: boolean;
  benefit_id: string;
  order_id: string | null;
  subscription_id: string | null;
  benefit: Benefit & { organization?: Organization };
  properties: Record<string, unknown>;
}

export interface LicenseKey {
  id: string;
  organization_id: string;
  benefit_id: string;
  key: string;
  display_key: string;
  status: string;
  limit_activations: number | null;
  usage: number;
  limit_usage: number | null;
  expires_at: string | null;
  activations?: { id: string; label: string; created_at: string }[];
}

export interface Downloadable {
  id: string;
  benefit_id: string;
  file: { id: string; name: string; size_readable: string; download: { url: string } };
}

export interface PaymentMethod {
  id: string;
  type: string;
  created_at: string;
  default: boolean;
  card: { brand: string; last4: string; exp_month: number; exp_year: number; wallet: string | null };
}

/** One of the customer's meters this period (`/v1/customer-portal/customer-meters/`). */
export interface CustomerMeter {
  id: string;
  created_at: string;
  modified_at: string | null;
  customer_id: string;
  meter_id: string;
  consumed_units: number;
  credited_units: number;
  balance: number;
  meter: { id: string; created_at: string; modified_at: string | null; name: string };
  subscription_id: string;
  product_price_id: string;
  period_start: string;
  period_end: string;
  currency: string;
  unit_amount: string;
  cap_amount: number | null;
  credits_used: string;
  billable_units: string;
  amount: number;
  discount_amount: number;
  tax_amount: number;
}
