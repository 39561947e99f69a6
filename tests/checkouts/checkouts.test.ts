/**
 * Checkout sessions up to confirmation, through the official SDK (contract) and raw HTTP (errors,
 * public view, isolation): amounts for fixed, custom and free prices with discounts and tax, discount
 * codes, custom fields, product switches, not-open checkouts, webhooks into the outbox.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotOpenCheckout } from '@polar-sh/sdk/models/errors/notopencheckout.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { Discount } from '../../api/src/modules/discounts/entities.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { locs } from '../catalogue/helpers-c.ts';
import { anonymousPolar, call, checkoutSeller, createProduct, post, publicUrl, type Seller } from './helpers.ts';

let srv: TestServer;
let a: Seller;
let b: Seller;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await checkoutSeller(srv);
  b = await checkoutSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

const fixed = (amount: number, currency = 'usd') => [{ amount_type: 'fixed', price_amount: amount, price_currency: currency }];

describe('seller checkouts through the SDK', () => {
  it('creates a checkout for a fixed price with every key the SDK requires', async () => {
    const p = await createProduct(srv.url, a.token, { name: 'Ebook', prices: fixed(2500) });
    const before = Date.now();
    const c = await a.polar.checkouts.create({
      productId: p.id,
      metadata: { campaign: 'spring', n: 3 },
      customerMetadata: { source: 'ads' },
      customerEmail: 'Buyer@Example.com',
      customerName: 'Bea Buyer',
      customerIpAddress: '203.0.113.7',
      customerExternalId: 'ext-42',
      embedOrigin: 'https://shop.example.com',
    });
    expect(c).toMatchObject({
      status: 'open',
      paymentProcessor: 'stripe',
      productId: p.id,
      productPriceId: p.prices[0]!.id,
      amount: 2500,
      taxAmount: 0,
      subtotalAmount: 2500,
      totalAmount: 2500,
      currency: 'usd',
      discountId: null,
      discount: null,
      allowDiscountCodes: true,
      isDiscountApplicable: false,
      isFreeProductPrice: false,
      isPaymentRequired: true,
      isPaymentSetupRequired: false,
      isPaymentFormRequired: true,
      customerId: null,
      customerEmail: 'buyer@example.com',
      customerName: 'Bea Buyer',
      customerIpAddress: '203.0.113.7',
      customerExternalId: 'ext-42',
      customerBillingAddress: null,
      customerTaxId: null,
      metadata: { campaign: 'spring', n: 3 },
      customerMetadata: { source: 'ads' },
      subscriptionId: null,
      embedOrigin: 'https://shop.example.com',
      paymentProcessorMetadata: {},
      attachedCustomFields: [],
    });
    expect(c.clientSecret).toMatch(/^polar_c_[A-Za-z0-9_-]{43}$/);
    expect(c.url).toBe(`${publicUrl(srv)}/checkout/${c.clientSecret}`);
    expect(c.successUrl).toBe(`${publicUrl(srv)}/checkout/${c.clientSecret}/confirmation`);
    const ttl = c.expiresAt.getTime() - before;
    expect(ttl).toBeGreaterThan(3590_000);
    expect(ttl).toBeLessThan(3610_000);
    expect(c.products.map((x) => x.id)).toEqual([p.id]);
    expect(c.product).toMatchObject({ id: p.id, name: 'Ebook' });
    expect(c.productPrice).toMatchObject({ id: p.prices[0]!.id, amountType: 'fixed', priceAmount: 2500 });

    // Raw: the amounts we add, and the seller view has no organization.
    const raw = await call(srv.url, a.token, 'GET', `/v1/checkouts/${c.id}`);
    expect(raw.body).toMatchObject({ discount_amount: 0, net_amount: 2500, modified_at: null, custom_field_data: {} });
    expect(raw.body).not.toHaveProperty('organization');

    expect(await a.polar.checkouts.get({ id: c.id })).toMatchObject({ id: c.id, clientSecret: c.clientSecret });
  });

  it('custom, free, recurring and multi-product checkouts; the amount of a custom price is checked', async () => {
    const custom = await createProduct(srv.url, a.token, {
      name: 'Tip jar',
      prices: [{ amount_type: 'custom', price_currency: 'eur', minimum_amount: 500, maximum_amount: 5000, preset_amount: 1500 }],
    });
    const preset = await a.polar.checkouts.create({ productId: custom.id });
    expect(preset).toMatchObject({ amount: 1500, totalAmount: 1500, currency: 'eur', isPaymentRequired: true });
    const chosen = await a.polar.checkouts.create({ productPriceId: custom.prices[0]!.id, amount: 4200 });
    expect(chosen).toMatchObject({ amount: 4200, totalAmount: 4200 });
    for (const amount of [499, 5001]) {
      const res = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { product_id: custom.id, amount });
      expect(res.status).toBe(422);
      expect(locs(res.body)).toEqual(['body.amount']);
    }

    const free = await createProduct(srv.url, a.token, { name: 'Freebie', prices: [{ amount_type: 'free' }] });
    const f = await a.polar.checkouts.create({ productId: free.id });
    expect(f).toMatchObject({
      amount: null,
      taxAmount: null,
      subtotalAmount: null,
      totalAmount: null,
      currency: null,
      isFreeProductPrice: true,
      isPaymentRequired: false,
      isPaymentSetupRequired: false,
      isPaymentFormRequired: false,
    });

    const monthly = await createProduct(srv.url, a.token, { name: 'Monthly', recurring_interval: 'month', prices: fixed(900) });
    const m = await a.polar.checkouts.create({ products: [monthly.id, free.id] });
    expect(m).toMatchObject({ productId: monthly.id, amount: 900, isPaymentRequired: true, isPaymentSetupRequired: true });
    expect(m.products.map((x) => x.id)).toEqual([monthly.id, free.id]);

    const freeMonthly = await createProduct(srv.url, a.token, { name: 'Free tier', recurring_interval: 'month', prices: [{ amount_type: 'free' }] });
    expect(await a.polar.checkouts.create({ productId: freeMonthly.id })).toMatchObject({
      isPaymentSetupRequired: false,
      isPaymentFormRequired: false,
    });
  });

  it('needs exactly one of product_price_id, product_id, products; refuses archived and unknown ones', async () => {
    const p = await createProduct(srv.url, a.token);
    for (const body of [{}, { product_id: p.id, products: [p.id] }, { products: [] }]) {
      const res = await call(srv.url, a.token, 'POST', '/v1/checkouts/', body);
      expect(res.status, JSON.stringify(body)).toBe(422);
    }
    const archived = await createProduct(srv.url, a.token, { name: 'Old one' });
    await call(srv.url, a.token, 'PATCH', `/v1/products/${archived.id}`, { is_archived: true });
    const res = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { products: [p.id, archived.id] });
    expect(locs(res.body)).toEqual(['body.products.1']);
    const unknown = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { product_price_id: '00000000-0000-4000-8000-000000000000' });
    expect(locs(unknown.body)).toEqual(['body.product_price_id']);
  });

  it('prefills from a customer of the organization; another organization’s customer is a 422', async () => {
    const p = await createProduct(srv.url, a.token);
    const customer = await post(srv, a, '/v1/customers/', {
      email: 'known@example.com',
      name: 'Known Customer',
      external_id: 'cust-1',
      billing_address: { country: 'FR', city: 'Paris' },
    });
    const c = await a.polar.checkouts.create({ productId: p.id, customerId: customer.id });
    expect(c).toMatchObject({
      customerId: customer.id,
      customerEmail: 'known@example.com',
      customerName: 'Known Customer',
      customerExternalId: 'cust-1',
      customerBillingAddress: { country: 'FR', city: 'Paris' },
    });
    const byExternal = await a.polar.checkouts.create({ productId: p.id, customerExternalId: 'cust-1' });
    expect(byExternal.customerId).toBe(customer.id);
    // A subscription to upgrade must exist in the organization (upgrades: tests/checkouts/upgrade.test.ts).
    const unknownSub = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { product_id: p.id, subscription_id: '11111111-2222-4333-8444-555555555555' });
    expect(locs(unknownSub.body)).toEqual(['body.subscription_id']);

    const theirs = await post(srv, b, '/v1/customers/', { email: 'other@example.com', external_id: 'cust-1' });
    const res = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { product_id: p.id, customer_id: theirs.id });
    expect(locs(res.body)).toEqual(['body.customer_id']);
  });

  it('lists with organization and product filters and sorting; updates seller fields', async () => {
    const p1 = await createProduct(srv.url, a.token, { name: 'List one' });
    const p2 = await createProduct(srv.url, a.token, { name: 'List two' });
    const c1 = await a.polar.checkouts.create({ productId: p1.id });
    const c2 = await a.polar.checkouts.create({ productId: p2.id });
    const c3 = await a.polar.checkouts.create({ productId: p1.id });
    const byP1 = await a.polar.checkouts.list({ productId: p1.id, organizationId: a.organization.id, sorting: ['created_at'] });
    expect(byP1.result.items.map((c) => c.id)).toEqual([c1.id, c3.id]);
    expect(byP1.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const both = await a.polar.checkouts.list({ productId: [p1.id, p2.id], sorting: ['-created_at'], limit: 2 });
    expect(both.result.items.map((c) => c.id)).toEqual([c3.id, c2.id]);
    expect(both.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    // Every checkout expires its TTL after its creation: expires_at sorts as created_at does.
    const byExpiry = await a.polar.checkouts.list({ productId: [p1.id, p2.id], sorting: ['-expires_at'] });
    expect(byExpiry.result.items.map((c) => c.id)).toEqual([c3.id, c2.id, c1.id]);
    const byExpiryAsc = await a.polar.checkouts.list({ productId: [p1.id, p2.id], sorting: ['expires_at'] });
    expect(byExpiryAsc.result.items.map((c) => c.id)).toEqual([c1.id, c2.id, c3.id]);
    const bad = await call(srv.url, a.token, 'GET', '/v1/checkouts/?sorting=amount');
    expect(locs(bad.body)).toEqual(['query.sorting']);

    const updated = await a.polar.checkouts.update({
      id: c1.id,
      checkoutUpdate: {
        metadata: { order_ref: 'A-1' },
        customerMetadata: { tier: 'gold' },
        customerIpAddress: '198.51.100.1',
        successUrl: 'https://example.com/thanks',
        embedOrigin: 'https://example.com',
        allowDiscountCodes: false,
        customerEmail: 'later@example.com',
      },
    });
    expect(updated).toMatchObject({
      metadata: { order_ref: 'A-1' },
      customerMetadata: { tier: 'gold' },
      customerIpAddress: '198.51.100.1',
      successUrl: 'https://example.com/thanks',
      embedOrigin: 'https://example.com',
      allowDiscountCodes: false,
      customerEmail: 'later@example.com',
    });
    expect(updated.modifiedAt).toBeInstanceOf(Date);
  });

  it('writes checkout.created and checkout.updated into the outbox with the seller read model', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id, metadata: { hook: 'yes' } });
    await a.polar.checkouts.update({ id: c.id, checkoutUpdate: { customerName: 'Hooked' } });
    const em = srv.deps.orm.em.fork();
    const events = await em.find(OutboxEvent, { organizationId: a.organization.id, type: { $like: 'checkout.%' } }, { orderBy: { createdAt: 'asc' } });
    const mine = events.filter((e) => e.data.id === c.id);
    expect(mine.map((e) => e.type)).toEqual(['checkout.created', 'checkout.updated']);
    expect(mine[0]!.data).toMatchObject({ id: c.id, status: 'open', metadata: { hook: 'yes' }, client_secret: c.clientSecret });
    expect(mine[1]!.data).toMatchObject({ customer_name: 'Hooked' });
  });
});

describe('discounts and tax', () => {
  it('applies a discount by id and taxes the net amount at the billing country’s rate', async () => {
    const p = await createProduct(srv.url, a.token, { name: 'Taxed', prices: fixed(10_000) });
    const pct = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 2500, name: 'Quarter' });
    const rate = await post(srv, a, '/v1/tax-rates/', { country: 'de', basis_points: 1900 });
    expect(rate).toMatchObject({ country: 'DE', basis_points: 1900, organization_id: a.organization.id });

    const c = await a.polar.checkouts.create({ productId: p.id, discountId: pct.id });
    expect(c).toMatchObject({ amount: 10_000, subtotalAmount: 10_000, taxAmount: 0, totalAmount: 7500, discountId: pct.id, isDiscountApplicable: true });
    expect(c.discount).toMatchObject({ id: pct.id, type: 'percentage', basisPoints: 2500, name: 'Quarter' });

    const pub = anonymousPolar(srv);
    const taxed = await pub.checkouts.clientUpdate({
      clientSecret: c.clientSecret,
      checkoutUpdatePublic: { customerBillingAddress: { country: 'DE', city: 'Berlin' } },
    });
    // net 7500, 19 % tax = 1425.
    expect(taxed).toMatchObject({ amount: 10_000, taxAmount: 1425, totalAmount: 8925 });
    const raw = await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.clientSecret}`);
    expect(raw.body).toMatchObject({ discount_amount: 2500, net_amount: 7500, tax_amount: 1425, total_amount: 8925 });

    // No rate for the country: no tax.
    const us = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { customerBillingAddress: { country: 'US' } } });
    expect(us).toMatchObject({ taxAmount: 0, totalAmount: 7500 });

    // Another organization's rates never apply; their list is theirs.
    expect((await call(srv.url, b.token, 'GET', '/v1/tax-rates/')).body.items).toEqual([]);
    expect((await call(srv.url, b.token, 'DELETE', `/v1/tax-rates/${rate.id}`)).status).toBe(404);
    const dup = await call(srv.url, a.token, 'POST', '/v1/tax-rates/', { country: 'DE', basis_points: 700 });
    expect(locs(dup.body)).toEqual(['body.country']);
    const listed = await call(srv.url, a.token, 'GET', '/v1/tax-rates/');
    expect(listed.body.items.map((t: { id: string }) => t.id)).toContain(rate.id);
    expect((await call(srv.url, a.token, 'DELETE', `/v1/tax-rates/${rate.id}`)).status).toBe(204);
    const untaxed = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { customerBillingAddress: { country: 'DE' } } });
    expect(untaxed).toMatchObject({ taxAmount: 0, totalAmount: 7500 });
  });

  it('a fixed discount never takes more than the price; a custom amount is discounted too', async () => {
    const cheap = await createProduct(srv.url, a.token, { name: 'Cheap', prices: fixed(300) });
    const big = await post(srv, a, '/v1/discounts/', { type: 'fixed', duration: 'forever', amount: 500, currency: 'usd', name: 'Five off' });
    const c = await a.polar.checkouts.create({ productId: cheap.id, discountId: big.id });
    expect(c).toMatchObject({ amount: 300, totalAmount: 0, isDiscountApplicable: true, isPaymentRequired: false, isPaymentFormRequired: false });

    const pwyw = await createProduct(srv.url, a.token, { name: 'PWYW', prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 1000 }] });
    const ten = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Ten' });
    const d = await a.polar.checkouts.create({ productId: pwyw.id, amount: 2345, discountId: ten.id });
    // 10 % of 2345 = 234.5 → 235 (half away from zero).
    expect(d).toMatchObject({ amount: 2345, totalAmount: 2110 });
  });

  it('refuses discounts that are not redeemable, not applicable or not the organization’s', async () => {
    const p = await createProduct(srv.url, a.token, { name: 'Target' });
    const other = await createProduct(srv.url, a.token, { name: 'Other' });
    const onlyOther = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Other only', products: [other.id] });
    const ended = await post(srv, a, '/v1/discounts/', {
      type: 'percentage', duration: 'once', basis_points: 1000, name: 'Ended',
      starts_at: '2020-01-01T00:00:00Z', ends_at: '2020-02-01T00:00:00Z',
    });
    const future = await post(srv, a, '/v1/discounts/', {
      type: 'percentage', duration: 'once', basis_points: 1000, name: 'Future', starts_at: '2999-01-01T00:00:00Z',
    });
    const used = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Used up', max_redemptions: 1 });
    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Discount, { id: used.id }, { redemptionsCount: 1 });
    const eur = await post(srv, a, '/v1/discounts/', { type: 'fixed', duration: 'once', amount: 100, currency: 'eur', name: 'Euro off' });
    const theirs = await post(srv, b, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Theirs' });
    for (const d of [onlyOther, ended, future, used, eur, theirs]) {
      const res = await call(srv.url, a.token, 'POST', '/v1/checkouts/', { product_id: p.id, discount_id: d.id });
      expect(res.status, d.name).toBe(422);
      expect(locs(res.body)).toEqual(['body.discount_id']);
    }
    const ok = await a.polar.checkouts.create({ productId: other.id, discountId: onlyOther.id });
    expect(ok.discountId).toBe(onlyOther.id);
  });

  it('takes a discount code on the public PATCH, case-insensitively, only when codes are allowed', async () => {
    const p = await createProduct(srv.url, a.token, { name: 'Coded', prices: fixed(2000) });
    await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 5000, name: 'Half', code: 'HALFOFF' });
    await post(srv, b, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 9000, name: 'Theirs', code: 'THEIRS' });
    await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'Gone', code: 'GONE', ends_at: '2020-01-01T00:00:00Z' });
    const c = await a.polar.checkouts.create({ productId: p.id });
    const pub = anonymousPolar(srv);
    const applied = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { discountCode: 'halfoff' } });
    expect(applied).toMatchObject({ totalAmount: 1000, isDiscountApplicable: true });
    expect(applied.discount).toMatchObject({ code: 'HALFOFF', basisPoints: 5000 });

    for (const code of ['NOPE', 'THEIRS', 'gone']) {
      const res = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { discount_code: code });
      expect(res.status, code).toBe(422);
      expect(locs(res.body)).toEqual(['body.discount_code']);
    }
    await expect(pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { discountCode: 'nope' } })).rejects.toBeInstanceOf(
      HTTPValidationError,
    );
    const removed = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { discountCode: null } });
    expect(removed).toMatchObject({ discountId: null, totalAmount: 2000 });

    const locked = await a.polar.checkouts.create({ productId: p.id, allowDiscountCodes: false });
    const res = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${locked.clientSecret}`, { discount_code: 'HALFOFF' });
    expect(locs(res.body)).toEqual(['body.discount_code']);
  });
});

describe('public checkout by client secret', () => {
  it('reads the public view with the organization and without seller-only keys', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id, metadata: { secret: 'x' }, customerExternalId: 'e1', customerMetadata: { k: 'v' } });
    const pub = await anonymousPolar(srv).checkouts.clientGet({ clientSecret: c.clientSecret });
    expect(pub).toMatchObject({ id: c.id, status: 'open', amount: 1500, productId: p.id });
    expect(pub.organization).toMatchObject({ id: a.organization.id, slug: a.organization.slug, name: a.organization.name });
    const raw = await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.clientSecret}`);
    expect(raw.status).toBe(200);
    for (const key of ['metadata', 'customer_external_id', 'subscription_id', 'customer_metadata']) expect(raw.body).not.toHaveProperty(key);
    expect(raw.body.url).toBe(`${publicUrl(srv)}/checkout/${c.clientSecret}`);

    // Seller-only keys are not taken from the buyer.
    const patched = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, {
      metadata: { secret: 'changed' },
      customer_name: 'Buyer',
      customer_email: 'Buyer@Example.org',
      customer_tax_id: 'FR123',
    });
    expect(patched.body).toMatchObject({ customer_name: 'Buyer', customer_email: 'buyer@example.org', customer_tax_id: 'FR123' });
    expect((await a.polar.checkouts.get({ id: c.id })).metadata).toEqual({ secret: 'x' });
  });

  it('answers 404 for unknown secrets', async () => {
    const pub = anonymousPolar(srv);
    await expect(pub.checkouts.clientGet({ clientSecret: 'polar_c_doesnotexist' })).rejects.toBeInstanceOf(ResourceNotFound);
    const res = await call(srv.url, null, 'PATCH', '/v1/checkouts/client/whatever', { customer_name: 'x' });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('ResourceNotFound');
  });

  it('switches product and price within the checkout’s products only', async () => {
    const p1 = await createProduct(srv.url, a.token, { name: 'Basic', prices: fixed(1000) });
    const p2 = await createProduct(srv.url, a.token, {
      name: 'Flexible',
      prices: [{ amount_type: 'custom', price_currency: 'usd', minimum_amount: 2000, maximum_amount: 9000 }],
    });
    const outsider = await createProduct(srv.url, a.token, { name: 'Outsider' });
    const c = await a.polar.checkouts.create({ products: [p1.id, p2.id] });
    const pub = anonymousPolar(srv);
    const switched = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { productId: p2.id } });
    expect(switched).toMatchObject({ productId: p2.id, productPriceId: p2.prices[0]!.id, amount: 2000 });
    const asked = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { amount: 7000 } });
    expect(asked).toMatchObject({ amount: 7000, totalAmount: 7000 });
    // The asked amount stays while other fields change.
    expect(await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { customerName: 'Z' } })).toMatchObject({ amount: 7000 });
    const tooMuch = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { amount: 9001 });
    expect(locs(tooMuch.body)).toEqual(['body.amount']);
    const back = await pub.checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { productPriceId: p1.prices[0]!.id } });
    expect(back).toMatchObject({ productId: p1.id, amount: 1000 });

    const out1 = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { product_id: outsider.id });
    expect(locs(out1.body)).toEqual(['body.product_id']);
    const out2 = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { product_price_id: outsider.prices[0]!.id });
    expect(locs(out2.body)).toEqual(['body.product_price_id']);
  });

  it('drops a discount that does not apply to the newly chosen product', async () => {
    const p1 = await createProduct(srv.url, a.token, { name: 'With discount', prices: fixed(1000) });
    const p2 = await createProduct(srv.url, a.token, { name: 'Without', prices: fixed(1000) });
    const d = await post(srv, a, '/v1/discounts/', { type: 'percentage', duration: 'once', basis_points: 1000, name: 'P1 only', products: [p1.id] });
    const c = await a.polar.checkouts.create({ products: [p1.id, p2.id], discountId: d.id });
    expect(c.totalAmount).toBe(900);
    const switched = await anonymousPolar(srv).checkouts.clientUpdate({ clientSecret: c.clientSecret, checkoutUpdatePublic: { productId: p2.id } });
    expect(switched).toMatchObject({ discountId: null, totalAmount: 1000 });
  });

  it('validates custom field data against the product’s attached fields', async () => {
    const field = (body: Record<string, unknown>) => post(srv, a, '/v1/custom-fields/', body);
    const company = await field({ type: 'text', slug: 'company', name: 'Company', properties: { min_length: 2, max_length: 10 } });
    const seats = await field({ type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1, le: 50 } });
    const size = await field({ type: 'select', slug: 'size', name: 'Size', properties: { options: [{ value: 's', label: 'S' }, { value: 'm', label: 'M' }] } });
    const terms = await field({ type: 'checkbox', slug: 'terms', name: 'Terms', properties: {} });
    const birthday = await field({ type: 'date', slug: 'birthday', name: 'Birthday', properties: {} });
    const p = await createProduct(srv.url, a.token, {
      name: 'With fields',
      attached_custom_fields: [
        { custom_field_id: company.id, required: true },
        { custom_field_id: seats.id, required: false },
        { custom_field_id: size.id, required: false },
        { custom_field_id: terms.id, required: true },
        { custom_field_id: birthday.id, required: false },
      ],
    });
    const c = await a.polar.checkouts.create({ productId: p.id });
    expect(c.attachedCustomFields.map((f) => [f.customField.slug, f.required, f.order])).toEqual([
      ['company', true, 0],
      ['seats', false, 1],
      ['size', false, 2],
      ['terms', true, 3],
      ['birthday', false, 4],
    ]);
    const path = `/v1/checkouts/client/${c.clientSecret}`;
    const bad = await call(srv.url, null, 'PATCH', path, {
      custom_field_data: { company: 'x', seats: 51, size: 'xl', terms: false, birthday: 'yesterday' },
    });
    expect(bad.status).toBe(422);
    expect(locs(bad.body).sort()).toEqual(
      ['company', 'seats', 'size', 'terms', 'birthday'].map((s) => `body.custom_field_data.${s}`).sort(),
    );
    const missing = await call(srv.url, null, 'PATCH', path, { custom_field_data: { seats: 3 } });
    expect(locs(missing.body).sort()).toEqual(['body.custom_field_data.company', 'body.custom_field_data.terms']);
    const wrongTypes = await call(srv.url, null, 'PATCH', path, { custom_field_data: { company: 12, terms: 'yes', seats: 1.5 } });
    expect(locs(wrongTypes.body).sort()).toEqual(['body.custom_field_data.company', 'body.custom_field_data.seats', 'body.custom_field_data.terms']);
    const tooLong = await call(srv.url, null, 'PATCH', path, { custom_field_data: { company: 'x'.repeat(11), terms: true } });
    expect(locs(tooLong.body)).toEqual(['body.custom_field_data.company']);

    const ok = await anonymousPolar(srv).checkouts.clientUpdate({
      clientSecret: c.clientSecret,
      checkoutUpdatePublic: { customFieldData: { company: 'Acme', seats: 5, size: 'm', terms: true, birthday: '1990-05-17', stray: 'dropped' } },
    });
    expect(ok.customFieldData).toEqual({ company: 'Acme', seats: 5, size: 'm', terms: true, birthday: '1990-05-17' });
  });

  it('refuses updates once the checkout is not open (403 NotOpenCheckout)', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Checkout, { id: c.id }, { status: 'confirmed' });
    const res = await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { customer_name: 'Late' });
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: 'NotOpenCheckout', detail: expect.any(String) });
    await expect(a.polar.checkouts.update({ id: c.id, checkoutUpdate: { metadata: { a: 1 } } })).rejects.toBeInstanceOf(NotOpenCheckout);
    // A confirmed checkout is still readable by its buyer.
    expect((await anonymousPolar(srv).checkouts.clientGet({ clientSecret: c.clientSecret })).status).toBe('confirmed');
  });

  it('treats a checkout past expires_at as expired before the workflow writes it', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Checkout, { id: c.id }, { expiresAt: new Date(Date.now() - 1000) });
    expect((await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.clientSecret}`)).status).toBe(404);
    expect((await call(srv.url, null, 'PATCH', `/v1/checkouts/client/${c.clientSecret}`, { customer_name: 'x' })).status).toBe(404);
    expect((await a.polar.checkouts.get({ id: c.id })).status).toBe('expired');
    const res = await call(srv.url, a.token, 'PATCH', `/v1/checkouts/${c.id}`, { metadata: { a: 1 } });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotOpenCheckout');
    const expired = await a.polar.checkouts.list({ organizationId: a.organization.id, productId: p.id });
    expect(expired.result.items.map((x) => x.status)).toEqual(['expired']);
    const open = await call(srv.url, a.token, 'GET', `/v1/checkouts/?product_id=${p.id}&status=open`);
    expect(open.body.items).toEqual([]);
  });
});

describe('tenant isolation', () => {
  it('another organization cannot see, list or change a checkout, nor check out its products', async () => {
    const p = await createProduct(srv.url, a.token);
    const c = await a.polar.checkouts.create({ productId: p.id });
    await expect(b.polar.checkouts.get({ id: c.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await call(srv.url, b.token, 'PATCH', `/v1/checkouts/${c.id}`, { metadata: { x: 1 } })).status).toBe(404);
    const list = await b.polar.checkouts.list({});
    expect(list.result.items.map((x) => x.id)).not.toContain(c.id);
    const theirs = await call(srv.url, b.token, 'GET', `/v1/checkouts/?organization_id=${a.organization.id}`);
    expect(theirs.body.items).toEqual([]);
    const res = await call(srv.url, b.token, 'POST', '/v1/checkouts/', { product_id: p.id });
    expect(locs(res.body)).toEqual(['body.product_id']);
    // Scopes are enforced.
    const noScope = await call(srv.url, null, 'GET', '/v1/checkouts/');
    expect(noScope.status).toBe(401);
  });
});
