/** Helpers for the checkout confirmation tests: a seller with every scope the path needs, polling, raw confirm. */
import type { TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { call } from '../checkouts/helpers.ts';

export { call };

export const CONFIRM_SCOPES = [
  'checkouts:read', 'checkouts:write',
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'discounts:read', 'discounts:write',
  'customers:read', 'customers:write',
  'orders:read', 'subscriptions:read',
  'license_keys:read',
  'organizations:read',
];

export type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;

export function confirmSeller(srv: TestServer): Promise<Seller> {
  return sellerWithSdk(srv, CONFIRM_SCOPES);
}

/** Polls `fn` until it returns a truthy value (the workflow runs after the confirm request answered). */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The buyer's confirm over raw HTTP (no credentials). */
export function confirmRaw(srv: TestServer, clientSecret: string, body: Record<string, unknown>) {
  return call(srv.url, null, 'POST', `/v1/checkouts/client/${clientSecret}/confirm`, body);
}

export const buyer = (email: string) => ({
  customer_email: email,
  customer_name: 'Bea Buyer',
  customer_billing_address: { country: 'US' },
});

/** A checkout (seller API) for a product, optionally with a discount; answers its id and client secret. */
export async function newCheckout(srv: TestServer, s: Seller, productId: string, extra: Record<string, unknown> = {}) {
  const res = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: productId, ...extra });
  if (res.status !== 201) throw new Error(`checkout create failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { id: string; client_secret: string };
}

/** Waits until the checkout-confirm workflow has marked the checkout succeeded (or failed). */
export async function fulfilled(srv: TestServer, s: Seller, checkoutId: string): Promise<string> {
  return until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/checkouts/${checkoutId}`);
    return ['succeeded', 'failed'].includes(res.body.status) ? (res.body.status as string) : null;
  });
}
