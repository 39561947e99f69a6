/**
 * Checkout expiry through the real worker's checkout-expiry sweeper (a short CHECKOUT_TTL_SECONDS),
 * and checkout links' public redirect that starts a fresh checkout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotOpenCheckout } from '@polar-sh/sdk/models/errors/notopencheckout.js';
import { WorkflowStart } from '../../api/src/kit/workflow-starts.ts';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { anonymousPolar, call, checkoutSeller, createProduct, post, publicUrl, type Seller } from './helpers.ts';
import { until } from '../confirm/helpers.ts';

const TTL_SECONDS = 3;
/** A loose limit on waiting for the sweeper (a busy machine); the assertions are on what it wrote, not when. */
const EXPIRY_WAIT_MS = 60_000;
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

/**
 * Waits for the sweeper to store the checkout `expired`, then checks what it wrote: one checkout.updated
 * with status expired, and the expiry made no earlier than its expires_at.
 */
async function waitExpired(c: { id: string; expiresAt: Date }): Promise<void> {
  await until(async () => ((await storedStatus(c.id)) === 'expired' ? true : null), EXPIRY_WAIT_MS);
  const stored = await srv.deps.orm.em.fork().findOneOrFail(Checkout, { id: c.id });
  expect(stored.status).toBe('expired');
  expect(stored.modifiedAt!.getTime()).toBeGreaterThanOrEqual(c.expiresAt.getTime());
  const updates = await checkoutUpdates(c.id);
  expect(updates).toHaveLength(1);
  expect(updates[0]!.data).toMatchObject({ id: c.id, status: 'expired' });
  expect(Date.parse(updates[0]!.data.modified_at as string)).toBeGreaterThanOrEqual(c.expiresAt.getTime());
}

async function checkoutUpdates(checkoutId: string) {
  const events = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: a.organization.id, type: 'checkout.updated' });
  return events.filter((e) => e.data.id === checkoutId);
}

describe('checkout expiry through the worker', () => {
  it('marks an open checkout expired at expires_at, writes checkout.updated, then refuses it', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    expect(c.expiresAt.getTime() - c.createdAt.getTime()).toBe(TTL_SECONDS * 1000);
    expect(await storedStatus(c.id)).toBe('open');

    // The sweeper (not the read path) writes the status, soon after expires_at.
    await waitExpired(c);

    const mine = await checkoutUpdates(c.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]!.data).toMatchObject({ status: 'expired', client_secret: c.clientSecret });

    expect((await a.polar.checkouts.get({ id: c.id })).status).toBe('expired');
    await expect(anonymousPolar(srv).checkouts.clientGet({ clientSecret: c.clientSecret })).rejects.toBeInstanceOf(ResourceNotFound);
    const pub = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { customer_name: 'Too late' });
    expect(pub.status).toBe(404);
    const confirm = await call(srv.url, null, 'POST', `/v1/checkouts/client/${c.clientSecret}/confirm`, {
      customer_email: 'late@example.com',
      customer_name: 'Too Late',
      customer_billing_address: { country: 'US' },
      confirmation_token_id: 'tok_visa',
    });
    expect(confirm.status).toBe(404);
    expect(await srv.deps.orm.em.fork().count(Order, { checkout: c.id })).toBe(0);
    await expect(a.polar.checkouts.update({ id: c.id, checkoutUpdate: { metadata: { late: true } } })).rejects.toBeInstanceOf(
      NotOpenCheckout,
    );
    // Creating a checkout no longer records a workflow start of its own.
    expect(await srv.deps.orm.em.fork().count(WorkflowStart, { workflowType: 'checkoutExpiryWorkflow' })).toBe(0);
  });

  it('leaves a checkout that is no longer open alone', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    await srv.deps.orm.em.fork().nativeUpdate(Checkout, { id: c.id }, { status: 'confirmed' });
    // A checkout created after it expires after it: once the sweeper expired that one, it has passed c's expires_at.
    const later = await a.polar.checkouts.create({ productId: p.id });
    expect(later.expiresAt.getTime()).toBeGreaterThanOrEqual(c.expiresAt.getTime());
    await waitExpired(later);
    expect(await storedStatus(c.id)).toBe('confirmed');
    expect(await checkoutUpdates(c.id)).toEqual([]);
  });

  it('expires every checkout of a stream created at different times, each once', async () => {
    const p = await createProduct(srv.url, a.token);
    const link = await a.polar.checkoutLinks.create({ productId: p.id });
    const created: { id: string; expiresAt: Date }[] = [];
    for (let i = 0; i < 8; i++) {
      if (i % 2) {
        // Through the link redirect as well as the API: every creation path is covered by the sweeper.
        const res = await fetch(`${srv.url}/v1/checkout-links/${link.clientSecret}/redirect`, { redirect: 'manual' });
        expect(res.status).toBe(302);
        const secret = res.headers.get('location')!.split('/checkout/')[1]!;
        const stored = await srv.deps.orm.em.fork().findOneOrFail(Checkout, { clientSecret: secret });
        created.push({ id: stored.id, expiresAt: stored.expiresAt });
      } else {
        created.push(await a.polar.checkouts.create({ productId: p.id }));
      }
      await new Promise((r) => setTimeout(r, 150 + 100 * (i % 3)));
    }
    for (const c of created) await waitExpired(c);
    for (const c of created) {
      const updates = await checkoutUpdates(c.id);
      expect(updates).toHaveLength(1);
      expect(updates[0]!.data).toMatchObject({ id: c.id, status: 'expired' });
    }
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
