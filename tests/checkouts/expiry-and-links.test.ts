/**
 * Checkout expiry through the real worker (a short CHECKOUT_TTL_SECONDS), and checkout links'
 * public redirect that starts a fresh checkout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotOpenCheckout } from '@polar-sh/sdk/models/errors/notopencheckout.js';
import { checkoutExpiryWorkflowId } from '../../workflows/src/ids.ts';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { anonymousPolar, call, checkoutSeller, createProduct, post, publicUrl, type Seller } from './helpers.ts';

const TTL_SECONDS = 3;
let srv: TestServer;
let a: Seller;

beforeAll(async () => {
  srv = await startTestServer({ env: { CHECKOUT_TTL_SECONDS: String(TTL_SECONDS) } });
  a = await checkoutSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

async function storedStatus(id: string): Promise<string | undefined> {
  const c = await srv.deps.orm.em.fork().findOne(Checkout, { id });
  return c?.status;
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('checkout expiry through the worker', () => {
  it('marks an open checkout expired at expires_at, writes checkout.updated, then refuses it', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    expect(c.expiresAt.getTime() - c.createdAt.getTime()).toBe(TTL_SECONDS * 1000);
    expect(await storedStatus(c.id)).toBe('open');

    // The workflow (not the read path) writes the status.
    await waitFor('the stored status to become expired', async () => (await storedStatus(c.id)) === 'expired');
    const handle = srv.deps.temporal.workflow.getHandle(checkoutExpiryWorkflowId(c.id));
    expect(await handle.result()).toEqual({ status: 'expired' });

    const em = srv.deps.orm.em.fork();
    const events = await em.find(OutboxEvent, { organizationId: a.organization.id, type: 'checkout.updated' });
    const mine = events.filter((e) => e.data.id === c.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.data).toMatchObject({ status: 'expired', client_secret: c.clientSecret });

    expect((await a.polar.checkouts.get({ id: c.id })).status).toBe('expired');
    await expect(anonymousPolar(srv).checkouts.clientGet({ clientSecret: c.clientSecret })).rejects.toBeInstanceOf(ResourceNotFound);
    const pub = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { customer_name: 'Too late' });
    expect(pub.status).toBe(404);
    await expect(a.polar.checkouts.update({ id: c.id, checkoutUpdate: { metadata: { late: true } } })).rejects.toBeInstanceOf(
      NotOpenCheckout,
    );
  });

  it('leaves a checkout that is no longer open alone', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    await srv.deps.orm.em.fork().nativeUpdate(Checkout, { id: c.id }, { status: 'confirmed' });
    const handle = srv.deps.temporal.workflow.getHandle(checkoutExpiryWorkflowId(c.id));
    expect(await handle.result()).toEqual({ status: 'confirmed' });
    expect(await storedStatus(c.id)).toBe('confirmed');
  });
});

describe('checkout link redirect', () => {
  it('creates a fresh checkout from the link and redirects (302) to its page', async () => {
    const p1 = await createProduct(srv.url, a.token, { name: 'Linked one', prices: [{ amount_type: 'fixed', price_amount: 4000, price_currency: 'usd' }] });
    const p2 = await createProduct(srv.url, a.token, { name: 'Linked two' });
    const d = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 2500, name: 'Link deal' });
    const link = await a.polar.checkoutLinks.create({
      products: [p1.id, p2.id],
      discountId: d.id,
      allowDiscountCodes: false,
      successUrl: 'https://example.com/thanks',
      metadata: { source: 'newsletter' },
    });
    const res = await fetch(`${srv.url}/v1/checkout-links/${link.clientSecret}/redirect?customer_email=Reader@Example.com&customer_name=Reader`, {
      redirect: 'manual',
    });
    expect(res.status).toBe(302);
    const location = res.headers.get('location')!;
    const prefix = `${publicUrl(srv)}/checkout/`;
    expect(location.startsWith(prefix)).toBe(true);
    const secret = location.slice(prefix.length);
    expect(secret).toMatch(/^polar_c_/);

    const pub = await anonymousPolar(srv).checkouts.clientGet({ clientSecret: secret });
    expect(pub).toMatchObject({
      status: 'open',
      productId: p1.id,
      discountId: d.id,
      allowDiscountCodes: false,
      successUrl: 'https://example.com/thanks',
      customerEmail: 'reader@example.com',
      customerName: 'Reader',
      amount: 4000,
      totalAmount: 3000,
    });
    expect(pub.products.map((p) => p.id)).toEqual([p1.id, p2.id]);
    expect((await a.polar.checkouts.get({ id: pub.id })).metadata).toEqual({ source: 'newsletter' });

    // Every visit is a new checkout; a bad prefill is ignored.
    const again = await fetch(`${srv.url}/v1/checkout-links/${link.clientSecret}/redirect?customer_email=not-an-email`, { redirect: 'manual' });
    expect(again.status).toBe(302);
    const secret2 = again.headers.get('location')!.slice(prefix.length);
    expect(secret2).not.toBe(secret);
    expect((await anonymousPolar(srv).checkouts.clientGet({ clientSecret: secret2 })).customerEmail).toBeNull();
  });

  it('starts at the link’s price when it has one', async () => {
    const p = await createProduct(srv.url, a.token, {
      name: 'PWYW link',
      prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500, preset_amount: 800 }],
    });
    const link = await a.polar.checkoutLinks.create({ productPriceId: p.prices[0]!.id });
    const res = await fetch(`${srv.url}/v1/checkout-links/${link.clientSecret}/redirect?amount=1200`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    const secret = res.headers.get('location')!.split('/checkout/')[1]!;
    expect(await anonymousPolar(srv).checkouts.clientGet({ clientSecret: secret })).toMatchObject({
      productPriceId: p.prices[0]!.id,
      amount: 1200,
    });
  });

  it('answers 404 for unknown and deleted links', async () => {
    const unknown = await fetch(`${srv.url}/v1/checkout-links/polar_cl_nope/redirect`, { redirect: 'manual' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error).toBe('ResourceNotFound');
    const p = await createProduct(srv.url, a.token);
    const link = await a.polar.checkoutLinks.create({ productId: p.id });
    await a.polar.checkoutLinks.delete({ id: link.id });
    const deleted = await fetch(`${srv.url}/v1/checkout-links/${link.clientSecret}/redirect`, { redirect: 'manual' });
    expect(deleted.status).toBe(404);
  });
});
