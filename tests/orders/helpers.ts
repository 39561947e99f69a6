/**
 * Helpers for the order, invoice and portal-flow tests: real purchases (a checkout confirmed with a
 * sandbox test token, fulfilled by the checkout-confirm workflow) and reading the text of a PDF.
 */
import { randomUUID } from 'node:crypto';
import type { TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { call } from '../checkouts/helpers.ts';
import { until } from '../confirm/helpers.ts';

export { call, until };

export const ORDER_SELLER_SCOPES = [
  'checkouts:read', 'checkouts:write',
  'products:read', 'products:write',
  'discounts:read', 'discounts:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
  'orders:read', 'subscriptions:read',
];

export type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;
export const orderSeller = (srv: TestServer): Promise<Seller> => sellerWithSdk(srv, ORDER_SELLER_SCOPES);

export const buyerEmail = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

export const BILLING_ADDRESS = { line1: '1 Market Street', city: 'San Francisco', postal_code: '94105', state: 'US-CA', country: 'US' };

export async function product(
  srv: TestServer,
  s: Seller,
  name: string,
  amount: number,
  recurring: 'month' | 'year' | null = null,
): Promise<{ id: string; name: string }> {
  const res = await call(srv.url, s.token, 'POST', '/v1/products/', {
    name,
    recurring_interval: recurring,
    prices: [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }],
  });
  if (res.status !== 201) throw new Error(`product: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export interface Purchase {
  checkoutId: string;
  customerId: string;
  /** A full customer session of the buyer (seller-created). */
  customerSessionToken: string;
  order: any;
}

/**
 * Buys a product as `email`: checkout (seller API), confirm by client secret with a test card
 * token, then waits for the workflow's order.
 */
export async function purchase(
  srv: TestServer,
  s: Seller,
  productId: string,
  email: string,
  opts: { discountId?: string; name?: string; token?: string } = {},
): Promise<Purchase> {
  const created = await call(srv.url, s.token, 'POST', '/v1/checkouts/', {
    product_id: productId,
    ...(opts.discountId ? { discount_id: opts.discountId } : {}),
  });
  if (created.status !== 201) throw new Error(`checkout: ${created.status} ${JSON.stringify(created.body)}`);
  const confirmed = await call(srv.url, null, 'POST', `/v1/checkouts/client/${created.body.client_secret}/confirm`, {
    customer_email: email,
    customer_name: opts.name ?? 'Bea Buyer',
    customer_billing_address: BILLING_ADDRESS,
    confirmation_token_id: opts.token ?? 'tok_visa',
  });
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  const order = await until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${created.body.id}`);
    return res.body.items?.[0] ?? null;
  });
  // The token a confirmation returns reaches only that checkout's purchase; the portal flows act as the
  // customer in the whole portal (cards, every order), so they use a seller-created session.
  const session = await call(srv.url, s.token, 'POST', '/v1/customer-sessions/', { customer_id: confirmed.body.customer_id });
  if (session.status !== 201) throw new Error(`customer session: ${session.status} ${JSON.stringify(session.body)}`);
  return {
    checkoutId: created.body.id,
    customerId: confirmed.body.customer_id,
    customerSessionToken: session.body.token,
    order,
  };
}

/**
 * The text shown by an uncompressed PDF (pdfkit with `compress: false`): every `[...] TJ` / `(...) Tj`
 * text operation decoded (hex strings in WinAnsi), one line per operation.
 */
export function pdfText(pdf: Buffer): string {
  const raw = pdf.toString('latin1');
  const lines: string[] = [];
  for (const m of raw.matchAll(/\[((?:<[0-9a-fA-F]*>|\([^)]*\)|\s|-?\d+(?:\.\d+)?)*)\]\s*TJ/g)) {
    let line = '';
    for (const part of m[1]!.matchAll(/<([0-9a-fA-F]*)>|\(([^)]*)\)/g)) {
      line += part[1] !== undefined ? Buffer.from(part[1], 'hex').toString('latin1') : part[2];
    }
    lines.push(line);
  }
  return lines.join('\n');
}

/** `$25.00` for 2500 (USD amounts in cents). */
export const usd = (cents: number) => `${cents < 0 ? '-' : ''}$${(Math.abs(cents) / 100).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
