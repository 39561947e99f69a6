/** Helpers for the discounts, checkout links, customers, customer sessions and repositories tests. */
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { randomToken, sha256Hex } from '../../api/src/kit/crypto.ts';
import { Organization, OrganizationAccessToken } from '../../api/src/modules/organizations/entities.ts';
import { json, uniqueSlug, type TestServer } from '../harness.ts';

export const CATALOGUE_C_SCOPES = [
  'products:read', 'products:write',
  'discounts:read', 'discounts:write',
  'checkout_links:read', 'checkout_links:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
  'repositories:read', 'repositories:write',
  'external_organizations:read',
];

/**
 * An organization and a `polar_oat_` token holding `scopes`, with an SDK client on it. Written through
 * the ORM (as `POST /v1/organization-access-tokens/` stores them) so these tests do not depend on the
 * sign-up flow, which has its own tests.
 */
export async function sellerWithSdk(srv: TestServer, scopes: string[] = CATALOGUE_C_SCOPES) {
  const em = srv.deps.orm.em.fork();
  const slug = uniqueSlug();
  const org = em.create(Organization, {
    name: `Org ${slug}`,
    slug,
    socials: [],
    featureSettings: {},
    subscriptionSettings: {},
    metadata: {},
  });
  const token = randomToken('polar_oat_', 32);
  em.create(OrganizationAccessToken, { organization: org, comment: `test ${randomUUID()}`, tokenHash: sha256Hex(token), scopes });
  await em.flush();
  return {
    organization: { id: org.id, slug: org.slug, name: org.name },
    token,
    polar: new Polar({ accessToken: token, serverURL: srv.url }),
  };
}

/** Raw HTTP with a bearer token; answers status, headers and parsed JSON (or null). */
export async function call(url: string, token: string | null, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null } as {
    status: number;
    headers: Headers;
    body: any;
  };
}

/** Creates a product over HTTP (one fixed price unless given). */
export async function createProduct(
  url: string,
  token: string,
  overrides: Record<string, unknown> = {},
): Promise<{ id: string; name: string; prices: { id: string; amount_type: string }[] }> {
  const res = await fetch(`${url}/v1/products/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({
      name: 'Test product',
      recurring_interval: null,
      prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }],
      ...overrides,
    }),
  });
  if (res.status !== 201) throw new Error(`product create failed: ${res.status} ${await res.text()}`);
  return json(res);
}

/** The `loc`s of a 422 body, joined with dots. */
export const locs = (body: { detail: { loc: (string | number)[] }[] }) => body.detail.map((d) => d.loc.join('.'));
