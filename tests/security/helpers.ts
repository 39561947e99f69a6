/** Helpers for the security regression tests (issue #23): a seller, purchases and full customer sessions. */
import { randomUUID } from 'node:crypto';
import type { TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { call, until } from '../confirm/helpers.ts';

export { call, until };

export const SECURITY_SCOPES = [
  'checkouts:read', 'checkouts:write',
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
  'orders:read', 'subscriptions:read',
  'license_keys:read',
  'files:read', 'files:write',
  'organizations:read',
];

export type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;
export const securitySeller = (srv: TestServer): Promise<Seller> => sellerWithSdk(srv, SECURITY_SCOPES);

export const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

export async function createBenefit(srv: TestServer, s: Seller, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await call(srv.url, s.token, 'POST', '/v1/benefits/', body);
  if (res.status !== 201) throw new Error(`benefit: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A product with the given prices carrying the benefits. */
export async function productWith(
  srv: TestServer,
  s: Seller,
  opts: { benefits: string[]; prices?: Record<string, unknown>[]; recurring?: boolean },
): Promise<string> {
  const res = await call(srv.url, s.token, 'POST', '/v1/products/', {
    name: `Product ${randomUUID().slice(0, 6)}`,
    recurring_interval: opts.recurring ? 'month' : null,
    prices: opts.prices ?? [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }],
  });
  if (res.status !== 201) throw new Error(`product: ${res.status} ${JSON.stringify(res.body)}`);
  const linked = await call(srv.url, s.token, 'POST', `/v1/products/${res.body.id}/benefits`, { benefits: opts.benefits });
  if (linked.status !== 200) throw new Error(`product benefits: ${linked.status} ${JSON.stringify(linked.body)}`);
  return res.body.id as string;
}

/** A checkout for the product (seller API), as a public checkout link would open one. */
export async function openCheckout(srv: TestServer, s: Seller, productId: string): Promise<{ id: string; client_secret: string }> {
  const res = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: productId });
  if (res.status !== 201) throw new Error(`checkout: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The order the checkout-confirm workflow creates for a checkout (seller API), once it exists. */
export function orderOf(srv: TestServer, s: Seller, checkoutId: string): Promise<{ id: string; subscription_id: string | null }> {
  return until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${checkoutId}`);
    return res.body?.items?.[0];
  }, 120_000);
}

/** A full customer session, created by the seller (`POST /v1/customer-sessions/`). */
export async function fullSession(srv: TestServer, s: Seller, customerId: string): Promise<{ customerSession: string }> {
  const res = await call(srv.url, s.token, 'POST', '/v1/customer-sessions/', { customer_id: customerId });
  if (res.status !== 201) throw new Error(`customer session: ${res.status} ${JSON.stringify(res.body)}`);
  return { customerSession: res.body.token as string };
}
