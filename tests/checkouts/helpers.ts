/** Helpers for the checkout tests: a seller with the scopes checkouts need, and small HTTP shortcuts. */
import { Polar } from '@polar-sh/sdk';
import type { TestServer } from '../harness.ts';
import { call, createProduct, sellerWithSdk } from '../catalogue/helpers-c.ts';

export { call, createProduct };

export const CHECKOUT_SCOPES = [
  'checkouts:read', 'checkouts:write',
  'products:read', 'products:write',
  'discounts:read', 'discounts:write',
  'custom_fields:read', 'custom_fields:write',
  'checkout_links:read', 'checkout_links:write',
  'customers:read', 'customers:write',
  'organizations:read', 'organizations:write',
];

export type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;

export function checkoutSeller(srv: TestServer): Promise<Seller> {
  return sellerWithSdk(srv, CHECKOUT_SCOPES);
}

/** An SDK client without credentials, for the public client-secret routes. */
export function anonymousPolar(srv: TestServer): Polar {
  return new Polar({ serverURL: srv.url });
}

/** POST with the seller's token; throws unless the status is `expect`. */
export async function post(srv: TestServer, s: Seller, path: string, body: unknown, expect = 201) {
  const res = await call(srv.url, s.token, 'POST', path, body);
  if (res.status !== expect) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const publicUrl = (srv: TestServer) => srv.deps.cfg.PUBLIC_URL.replace(/\/+$/, '');
