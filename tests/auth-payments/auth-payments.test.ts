/**
 * The auth service's payments plugin over HTTP with signed-in users (Better Auth 1.2 client and its
 * cookies): sign-up and user updates create, match or update the user's customer in the configured
 * seller organization; GET /api/auth/checkout (by product id or configured slug) creates a checkout
 * for the user and redirects to it; /portal opens the customer portal; /state returns the customer
 * state. Without configuration the routes answer the plugin's errors and no customer is made.
 *
 * Two API processes share one database: `plain` without payments configuration (it also runs the
 * worker and serves the seller API), `shop` configured for the seller's organization.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { signedUpUser } from '../auth/helpers.ts';
import { BILLING_ADDRESS, call, orderSeller, product, until, type Seller } from '../orders/helpers.ts';

let plain: TestServer;
let shop: TestServer;
let seller: Seller;
let other: Seller;
let starter: { id: string; name: string };
let pro: { id: string; name: string };
let foreign: { id: string; name: string };

beforeAll(async () => {
  plain = await startTestServer();
  [seller, other] = await Promise.all([orderSeller(plain), orderSeller(plain)]);
  [starter, pro, foreign] = await Promise.all([
    product(plain, seller, 'Starter pack', 1200),
    product(plain, seller, 'Pro plan', 2000, 'month'),
    product(plain, other, 'Not for sale here', 100),
  ]);
  shop = await startTestServer({
    databaseUrl: plain.databaseUrl,
    worker: false,
    env: {
      AUTH_PAYMENTS_ORGANIZATION: seller.organization.slug,
      AUTH_CHECKOUT_PRODUCTS: JSON.stringify({ pro: pro.id, retired: randomUUID() }),
      AUTH_CHECKOUT_SUCCESS_URL: 'https://shop.example.com/thanks',
      // Workflows it starts (checkout expiry) run on the plain server's worker.
      TEMPORAL_TASK_QUEUE: plain.deps.cfg.TEMPORAL_TASK_QUEUE,
    },
  });
}, 120_000);
afterAll(async () => {
  await shop?.close();
  await plain?.close();
});

/** The seller's view of the customer with this external id (404 → null). */
async function customerOf(externalId: string) {
  const res = await call(plain.url, seller.token, 'GET', `/v1/customers/external/${externalId}`);
  return res.status === 200 ? res.body : null;
}

const secretOf = (url: string) => url.split('/checkout/')[1]!;

describe('user → customer sync', () => {
  it('creates the customer on sign-up, with the user id as external id', async () => {
    const u = await signedUpUser(shop.url, { name: 'Nora New' });
    const c = await customerOf(u.user.id);
    expect(c).toMatchObject({ email: u.email, name: 'Nora New', external_id: u.user.id, organization_id: seller.organization.id });
  });

  it('matches an existing customer by email instead of creating another', async () => {
    const email = uniqueEmail('known');
    const existing = await call(plain.url, seller.token, 'POST', '/v1/customers/', { email, name: 'Known Buyer' });
    expect(existing.status).toBe(201);
    const u = await signedUpUser(shop.url, { email, name: 'Known Buyer' });
    const c = await customerOf(u.user.id);
    expect(c.id).toBe(existing.body.id);
    const all = await call(plain.url, seller.token, 'GET', `/v1/customers/?email=${encodeURIComponent(email)}`);
    expect(all.body.items).toHaveLength(1);
  });

  it('follows the user when they change their name', async () => {
    const u = await signedUpUser(shop.url, { name: 'Old Name' });
    const res = await u.client.updateUser({ name: 'Brand New Name' });
    expect(res.error).toBeNull();
    expect((await customerOf(u.user.id)).name).toBe('Brand New Name');
  });

  it('does nothing when payments are not configured', async () => {
    const u = await signedUpUser(plain.url);
    expect(await customerOf(u.user.id)).toBeNull();
  });
});

describe('GET /api/auth/checkout', () => {
  it('creates a checkout for the signed-in user and redirects to it', async () => {
    const u = await signedUpUser(shop.url, { name: 'Carla Checkout' });
    const res = await u.raw(`/api/auth/checkout?productId=${starter.id}`);
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    expect(location.startsWith(`${shop.deps.cfg.PUBLIC_URL.replace(/\/$/, '')}/checkout/polar_c_`)).toBe(true);

    const pub = await call(shop.url, null, 'GET', `/v1/checkouts/client/${secretOf(location)}`);
    expect(pub.status).toBe(200);
    expect(pub.body).toMatchObject({ product_id: starter.id, customer_email: u.email, customer_name: 'Carla Checkout', status: 'open' });
    const seen = await call(plain.url, seller.token, 'GET', `/v1/checkouts/${pub.body.id}`);
    expect(seen.body).toMatchObject({
      customer_external_id: u.user.id,
      customer_id: (await customerOf(u.user.id)).id,
      success_url: 'https://shop.example.com/thanks',
    });
  });

  it('answers {url, redirect: true} to a client asking for JSON, and resolves configured slugs', async () => {
    const u = await signedUpUser(shop.url);
    const res = await u.raw('/api/auth/checkout/pro', { headers: { accept: 'application/json' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { url: string; redirect: boolean };
    expect(body.redirect).toBe(true);
    const pub = await call(shop.url, null, 'GET', `/v1/checkouts/client/${secretOf(body.url)}`);
    expect(pub.body.product_id).toBe(pro.id);
  });

  it('lets anonymous visitors check out without a customer', async () => {
    const res = await fetch(`${shop.url}/api/auth/checkout?productId=${starter.id}`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const pub = await call(shop.url, null, 'GET', `/v1/checkouts/client/${secretOf(res.headers.get('location')!)}`);
    expect(pub.body.customer_email).toBeNull();
  });

  it('refuses unknown products, slugs and other organizations’ products', async () => {
    const u = await signedUpUser(shop.url);
    const notFound = { code: 'PRODUCT_ID_NOT_FOUND', message: 'Product Id not found' };
    for (const path of [
      '/api/auth/checkout',
      `/api/auth/checkout?productId=${foreign.id}`,
      `/api/auth/checkout?productId=${randomUUID()}`,
      '/api/auth/checkout?productId=not-a-uuid',
      '/api/auth/checkout/unknown-slug',
      '/api/auth/checkout/retired',
    ]) {
      const res = await u.raw(path);
      expect(res.status, path).toBe(400);
      expect(await res.json(), path).toEqual(notFound);
    }
  });

  it('answers "Checkout is not enabled" without a configured organization', async () => {
    const res = await fetch(`${plain.url}/api/auth/checkout?productId=${starter.id}`, { redirect: 'manual' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'CHECKOUT_IS_NOT_ENABLED', message: 'Checkout is not enabled' });
  });
});

describe('GET /api/auth/portal and /api/auth/state', () => {
  it('needs a signed-in user', async () => {
    for (const path of ['/api/auth/portal', '/api/auth/state']) {
      const res = await fetch(`${shop.url}${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(401);
    }
  });

  it('answers "Customer portal is not enabled" without a configured organization', async () => {
    const u = await signedUpUser(plain.url);
    for (const path of ['/api/auth/portal', '/api/auth/state']) {
      const res = await u.raw(path);
      expect(res.status, path).toBe(400);
      expect(await res.json()).toEqual({ code: 'CUSTOMER_PORTAL_IS_NOT_ENABLED', message: 'Customer portal is not enabled' });
    }
  });

  it("redirects to the user's customer portal with a working customer session", async () => {
    const u = await signedUpUser(shop.url, { name: 'Paula Portal' });
    const res = await u.raw('/api/auth/portal');
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get('location')!);
    expect(location.pathname).toBe(`/portal/${seller.organization.slug}`);
    const token = location.searchParams.get('customer_session_token')!;
    expect(token).toMatch(/^polar_cst_/);
    const me = await new Polar({ serverURL: plain.url }).customerPortal.customers.get({ customerSession: token });
    expect(me).toMatchObject({ email: u.email, name: 'Paula Portal' });
    expect(me.id).toBe((await customerOf(u.user.id)).id);

    const json = await u.raw('/api/auth/portal', { headers: { accept: 'application/json' } });
    expect(await json.json()).toMatchObject({ redirect: true, url: expect.stringContaining('customer_session_token=polar_cst_') });
  });

  it("returns the user's customer state, with the subscription bought through the auth checkout", async () => {
    const u = await signedUpUser(shop.url, { name: 'Sam Subscriber' });
    const empty = await u.raw('/api/auth/state');
    expect(empty.status).toBe(200);
    expect(await empty.json()).toMatchObject({ external_id: u.user.id, email: u.email, active_subscriptions: [], granted_benefits: [] });

    const go = await u.raw('/api/auth/checkout/pro');
    const confirmed = await call(plain.url, null, 'POST', `/v1/checkouts/client/${secretOf(go.headers.get('location')!)}/confirm`, {
      customer_billing_address: BILLING_ADDRESS,
      confirmation_token_id: 'tok_visa',
    });
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    const state = await until(async () => {
      const s = (await (await u.raw('/api/auth/state')).json()) as { id: string; active_subscriptions: { product_id: string }[] };
      return s.active_subscriptions.length ? s : null;
    });
    expect(state.active_subscriptions.map((s) => s.product_id)).toEqual([pro.id]);
    expect(state.id).toBe(confirmed.body.customer_id);
  });

  it("never shows another user's customer", async () => {
    const one = await signedUpUser(shop.url);
    const two = await signedUpUser(shop.url, { name: 'Two' });
    const r1 = await one.raw('/api/auth/state');
    const r2 = await two.raw('/api/auth/state');
    expect(r1.status).toBe(200);
    expect(r2.status).toBe(200);
    const s1 = (await r1.json()) as { id: string; external_id: string; email: string };
    const s2 = (await r2.json()) as { id: string; external_id: string; email: string };
    expect(s1).toMatchObject({ external_id: one.user.id, email: one.email });
    expect(s2).toMatchObject({ external_id: two.user.id, email: two.email });
    expect(two.user.id).not.toBe(one.user.id);
    expect(s2.id).not.toBe(s1.id);
  });
});

describe('POST /api/auth/polar/webhooks', () => {
  it('answers "webhook secret not found" when the plugin sells for an organization without a secret', async () => {
    const res = await fetch(`${shop.url}/api/auth/polar/webhooks`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' },
      body: JSON.stringify({ type: 'customer.created', data: {} }),
    });
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ code: 'WEBHOOK_SECRET_NOT_FOUND', message: 'webhook secret not found' });
    // Neither configured: the plugin is off.
    const off = await fetch(`${plain.url}/api/auth/polar/webhooks`, { method: 'POST', body: '{}' });
    expect(off.status).toBe(404);
  });
});
