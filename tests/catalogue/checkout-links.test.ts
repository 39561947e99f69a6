/** Checkout links through the official SDK (contract) and raw HTTP (errors, isolation). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { Product } from '../../api/src/modules/products/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createProduct, locs, sellerWithSdk } from './helpers-c.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv);
  b = await sellerWithSdk(srv);
});
afterAll(async () => {
  await srv?.close();
});

const publicUrl = () => srv.deps.cfg.PUBLIC_URL.replace(/\/+$/, '');

describe('checkout links through the SDK', () => {
  it('creates a link for a product and the SDK parses every embedded shape', async () => {
    const p = await createProduct(srv.url, a.token, {
      name: 'Monthly plan',
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }],
    });
    const discount = await a.polar.discounts.create({ type: 'percentage', duration: 'forever', basisPoints: 1500, name: 'Launch' });
    const link = await a.polar.checkoutLinks.create({
      productId: p.id,
      label: 'Homepage',
      discountId: discount.id,
      successUrl: 'https://example.com/thanks?checkout_id={CHECKOUT_ID}',
      metadata: { campaign: 'spring' },
    });
    expect(link).toMatchObject({
      paymentProcessor: 'stripe',
      label: 'Homepage',
      allowDiscountCodes: true,
      discountId: discount.id,
      organizationId: a.organization.id,
      productId: p.id,
      productPriceId: p.prices[0]!.id,
      metadata: { campaign: 'spring' },
      successUrl: 'https://example.com/thanks?checkout_id={CHECKOUT_ID}',
    });
    expect(link.clientSecret).toMatch(/^polar_cl_[A-Za-z0-9_-]{43}$/);
    expect(link.url).toBe(`${publicUrl()}/v1/checkout-links/${link.clientSecret}/redirect`);
    expect(link.products).toHaveLength(1);
    expect(link.products[0]).toMatchObject({ id: p.id, name: 'Monthly plan', isRecurring: true });
    expect(link.products[0]!.prices[0]).toMatchObject({ id: p.prices[0]!.id, amountType: 'fixed', priceAmount: 900 });
    expect(link.product.id).toBe(p.id);
    expect(link.productPrice).toMatchObject({ id: p.prices[0]!.id });
    expect(link.discount).toMatchObject({ id: discount.id, type: 'percentage', basisPoints: 1500, name: 'Launch' });

    expect(await a.polar.checkoutLinks.get({ id: link.id })).toMatchObject({ id: link.id, clientSecret: link.clientSecret });
  });

  it('creates a link for one price and for several products, keeping their order', async () => {
    const p1 = await createProduct(srv.url, a.token, {
      name: 'Pay what you want',
      prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 500 }],
    });
    const price = p1.prices[0]!;
    const byPrice = await a.polar.checkoutLinks.create({ productPriceId: price.id, allowDiscountCodes: false });
    expect(byPrice).toMatchObject({ productId: p1.id, productPriceId: price.id, allowDiscountCodes: false, label: null, discount: null });
    expect(byPrice.productPrice).toMatchObject({ id: price.id, amountType: 'custom', minimumAmount: 500 });

    const p2 = await createProduct(srv.url, a.token, { name: 'Second' });
    const p3 = await createProduct(srv.url, a.token, { name: 'Third' });
    const multi = await a.polar.checkoutLinks.create({ products: [p3.id, p1.id, p2.id] });
    expect(multi.products.map((x) => x.id)).toEqual([p3.id, p1.id, p2.id]);
    expect(multi.productId).toBe(p3.id);
  });

  it('lists with product and organization filters and sorting; updates; deletes', async () => {
    const p1 = await createProduct(srv.url, a.token, { name: 'List one' });
    const p2 = await createProduct(srv.url, a.token, { name: 'List two' });
    const l1 = await a.polar.checkoutLinks.create({ products: [p1.id, p2.id], label: 'b-label' });
    const l2 = await a.polar.checkoutLinks.create({ productId: p2.id, label: 'a-label' });
    const l3 = await a.polar.checkoutLinks.create({ productId: p1.id, label: 'c-label' });

    const byP2 = await a.polar.checkoutLinks.list({ productId: p2.id, sorting: ['label'] });
    expect(byP2.result.items.map((l) => l.id)).toEqual([l2.id, l1.id]);
    // The filter does not narrow the products shown.
    expect(byP2.result.items[1]!.products.map((p) => p.id)).toEqual([p1.id, p2.id]);
    const both = await a.polar.checkoutLinks.list({ productId: [p1.id, p2.id], organizationId: a.organization.id, sorting: ['-label'] });
    expect(both.result.items.map((l) => l.id)).toEqual([l3.id, l1.id, l2.id]);
    expect(both.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });

    const discount = await a.polar.discounts.create({ type: 'fixed', duration: 'once', amount: 200, name: 'Two off' });
    const updated = await a.polar.checkoutLinks.update({
      id: l1.id,
      checkoutLinkUpdate: { label: 'renamed', products: [p2.id], discountId: discount.id, allowDiscountCodes: false, metadata: { x: 1 } },
    });
    expect(updated).toMatchObject({
      label: 'renamed',
      allowDiscountCodes: false,
      discountId: discount.id,
      metadata: { x: 1 },
      productId: p2.id,
    });
    expect(updated.products.map((p) => p.id)).toEqual([p2.id]);
    expect(updated.discount).toMatchObject({ type: 'fixed', amount: 200, currency: 'usd' });

    const cleared = await call(srv.url, a.token, 'PATCH', `/v1/checkout-links/${l1.id}`, { discount_id: null, label: null, success_url: null });
    expect(cleared.status).toBe(200);
    expect(cleared.body).toMatchObject({ discount_id: null, discount: null, label: null, success_url: null, client_secret: l1.clientSecret });

    await a.polar.checkoutLinks.delete({ id: l1.id });
    await expect(a.polar.checkoutLinks.get({ id: l1.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const after = await a.polar.checkoutLinks.list({ productId: p2.id });
    expect(after.result.items.map((l) => l.id)).toEqual([l2.id]);
  });

  it('deleting a discount detaches it from links', async () => {
    const p = await createProduct(srv.url, a.token);
    const d = await a.polar.discounts.create({ type: 'percentage', duration: 'once', basisPoints: 100, name: 'Short-lived' });
    const link = await a.polar.checkoutLinks.create({ productId: p.id, discountId: d.id });
    await a.polar.discounts.delete({ id: d.id });
    const again = await a.polar.checkoutLinks.get({ id: link.id });
    expect(again.discountId).toBeNull();
    expect(again.discount).toBeNull();
  });
});

describe('checkout link rules (raw HTTP)', () => {
  it('needs exactly one of product_price_id, product_id, products', async () => {
    const p = await createProduct(srv.url, a.token);
    for (const body of [{}, { product_id: p.id, products: [p.id] }, { product_id: p.id, product_price_id: p.prices[0]!.id }, { products: [] }]) {
      const res = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(res.body.error).toBe('RequestValidationError');
    }
    const stripe = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { product_id: p.id, payment_processor: 'paypal' });
    expect(locs(stripe.body)).toEqual(['body.payment_processor']);
    const url = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { product_id: p.id, success_url: 'not a url' });
    expect(locs(url.body)).toEqual(['body.success_url']);
  });

  it("refuses other organizations' and archived products, prices and discounts, naming the field", async () => {
    const mine = await createProduct(srv.url, a.token);
    const theirs = await createProduct(srv.url, b.token);
    const theirDiscount = await b.polar.discounts.create({ type: 'percentage', duration: 'once', basisPoints: 100, name: 'Theirs' });
    const cases: [Record<string, unknown>, string[]][] = [
      [{ product_id: theirs.id }, ['body.product_id']],
      [{ product_price_id: theirs.prices[0]!.id }, ['body.product_price_id']],
      [{ products: [mine.id, theirs.id] }, ['body.products.1']],
      [{ product_id: mine.id, discount_id: theirDiscount.id }, ['body.discount_id']],
      [{ product_id: '00000000-0000-4000-8000-000000000000' }, ['body.product_id']],
    ];
    for (const [body, loc] of cases) {
      const res = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect(locs(res.body), JSON.stringify(body)).toEqual(loc);
    }
    const archived = await createProduct(srv.url, a.token, { name: 'Old' });
    await srv.deps.orm.em.fork().nativeUpdate(Product, { id: archived.id }, { isArchived: true });
    const res = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { products: [mine.id, archived.id] });
    expect(locs(res.body)).toEqual(['body.products.1']);
    const byPrice = await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { product_price_id: archived.prices[0]!.id });
    expect(locs(byPrice.body)).toEqual(['body.product_price_id']);

    const link = (await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { product_id: mine.id, label: 'keep' })).body;
    const bad = await call(srv.url, a.token, 'PATCH', `/v1/checkout-links/${link.id}`, { products: [theirs.id], label: 'changed' });
    expect(locs(bad.body)).toEqual(['body.products.0']);
    const bad2 = await call(srv.url, a.token, 'PATCH', `/v1/checkout-links/${link.id}`, { discount_id: theirDiscount.id, label: 'changed' });
    expect(locs(bad2.body)).toEqual(['body.discount_id']);
    // Nothing half-written.
    expect((await call(srv.url, a.token, 'GET', `/v1/checkout-links/${link.id}`)).body).toMatchObject({ label: 'keep', product_id: mine.id });
  });

  it('client secrets are unique and unguessable', async () => {
    const p = await createProduct(srv.url, a.token);
    const secrets = new Set<string>();
    for (let i = 0; i < 5; i++) secrets.add((await call(srv.url, a.token, 'POST', '/v1/checkout-links/', { product_id: p.id })).body.client_secret);
    expect(secrets.size).toBe(5);
    for (const s of secrets) expect(Buffer.from(s.slice('polar_cl_'.length), 'base64url').length).toBeGreaterThanOrEqual(16);
  });
});

describe('checkout link authorization and tenant isolation', () => {
  it('401 without a token, 403 without the scope', async () => {
    const anon = await call(srv.url, null, 'GET', '/v1/checkout-links/');
    expect(anon.status).toBe(401);
    expect(anon.headers.get('www-authenticate')).toBe('Bearer');
    const readOnly = await sellerWithSdk(srv, ['checkout_links:read', 'products:write']);
    const p = await createProduct(srv.url, readOnly.token);
    const res = await call(srv.url, readOnly.token, 'POST', '/v1/checkout-links/', { product_id: p.id });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
  });

  it("another organization's links are 404 and absent from lists", async () => {
    const p = await createProduct(srv.url, a.token);
    const link = await a.polar.checkoutLinks.create({ productId: p.id });
    for (const method of ['GET', 'PATCH', 'DELETE']) {
      const res = await call(srv.url, b.token, method, `/v1/checkout-links/${link.id}`, method === 'PATCH' ? { label: 'x' } : undefined);
      expect(res.status, method).toBe(404);
      expect(res.body.error).toBe('ResourceNotFound');
    }
    await expect(b.polar.checkoutLinks.get({ id: link.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await b.polar.checkoutLinks.list({ organizationId: a.organization.id })).result.items).toEqual([]);
    expect((await b.polar.checkoutLinks.list({ productId: p.id })).result.items).toEqual([]);
    expect((await a.polar.checkoutLinks.get({ id: link.id })).id).toBe(link.id);
  });
});
