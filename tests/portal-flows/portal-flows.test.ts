/**
 * Customer portal flows through `@polar-sh/sdk` 0.29.3 with the customer session a confirmed checkout
 * returns: the profile, saved payment methods (add with test tokens, default handling, delete,
 * declines), orders (filters, sorting, one order) and the order's PDF invoice; another customer's
 * records (same organization or another one) are 404s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { startTestServer, type TestServer } from '../harness.ts';
import { buyerEmail, call, orderSeller, pdfText, product, purchase, usd, type Purchase, type Seller } from '../orders/helpers.ts';

let srv: TestServer;
let polar: Polar;
let a: Seller;
let b: Seller;
let handbook: { id: string; name: string };
let poster: { id: string; name: string };
let x: Purchase; // buys the handbook and the poster
let xPoster: Purchase;
let y: Purchase; // another customer of the same organization
let z: Purchase; // a customer of another organization
let w: Purchase; // a subscriber (the workflow saved their card)

const sec = (p: Purchase) => ({ customerSession: p.customerSessionToken });

beforeAll(async () => {
  // Several purchases confirm at once: each holds a connection while it charges.
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '8' } });
  polar = new Polar({ serverURL: srv.url });
  [a, b] = await Promise.all([orderSeller(srv), orderSeller(srv)]);
  [handbook, poster] = await Promise.all([product(srv, a, 'Field handbook', 1900), product(srv, a, 'Wall poster', 900)]);
  const other = await product(srv, b, 'Other shop item', 500);
  const club = await product(srv, a, 'Monthly club', 1500, 'month');
  const xEmail = buyerEmail('xavier');
  [x, y, z, w] = await Promise.all([
    purchase(srv, a, handbook.id, xEmail, { name: 'Xavier Buyer' }),
    purchase(srv, a, handbook.id, buyerEmail('yolanda')),
    purchase(srv, b, other.id, buyerEmail('zed')),
    purchase(srv, a, club.id, buyerEmail('wendy')),
  ]);
  xPoster = await purchase(srv, a, poster.id, xEmail, { name: 'Xavier Buyer' });
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

async function rejects404(p: Promise<unknown>) {
  await expect(p).rejects.toBeInstanceOf(ResourceNotFound);
}

describe('profile', () => {
  it('reads the customer of the session', async () => {
    expect(x.customerSessionToken).toMatch(/^polar_cst_/);
    const me = await polar.customerPortal.customers.get(sec(x));
    expect(me.id).toBe(x.customerId);
    expect(me.name).toBe('Xavier Buyer');
    expect(me.billingAddress?.country).toBe('US');
    // Both purchases by the same email are the same customer.
    expect(xPoster.customerId).toBe(x.customerId);
  });
});

describe('payment methods', () => {
  const raw = (p: Purchase, method: string, path = '', body?: unknown) =>
    call(srv.url, p.customerSessionToken, method, `/v1/customer-portal/customers/me/payment-methods${path}`, body);

  it('adds cards, keeps one default, lists and deletes them', async () => {
    // A one-time purchase does not keep the card.
    expect((await polar.customerPortal.customers.getPaymentMethods(sec(x), {})).result.items).toEqual([]);

    const master = await polar.customerPortal.customers.addPaymentMethod(sec(x), {
      confirmationTokenId: 'tok_mastercard',
      setDefault: false,
      returnUrl: 'https://shop.example.com/portal',
    });
    // The first card becomes the default whatever set_default says.
    expect(master.default).toBe(true);

    const visa = await raw(x, 'POST', '', { confirmation_token_id: 'tok_visa', set_default: true, return_url: 'https://shop.example.com/portal' });
    expect(visa.status).toBe(201);
    expect(visa.body).toMatchObject({ type: 'card', default: true, card: { brand: 'visa', last4: '4242' } });
    expect(visa.body.card.exp_year).toBeGreaterThanOrEqual(new Date().getUTCFullYear());

    const listed = await raw(x, 'GET');
    expect(listed.status).toBe(200);
    expect(listed.body.pagination).toEqual({ total_count: 2, max_page: 1 });
    expect(listed.body.items.map((m: any) => [m.card.brand, m.default])).toEqual([
      ['visa', true],
      ['mastercard', false],
    ]);
    const sdkList = await polar.customerPortal.customers.getPaymentMethods(sec(x), { limit: 1 });
    expect(sdkList.result.items.map((m) => m.id)).toEqual([visa.body.id]);
    expect(sdkList.result.pagination).toEqual({ totalCount: 2, maxPage: 2 });

    // Deleting the default promotes the remaining card.
    await polar.customerPortal.customers.deletePaymentMethod(sec(x), { id: visa.body.id });
    const after = await raw(x, 'GET');
    expect(after.body.items.map((m: any) => [m.id, m.default])).toEqual([[master.id, true]]);
    await rejects404(polar.customerPortal.customers.deletePaymentMethod(sec(x), { id: visa.body.id }));
  });

  it("never shows or deletes another customer's payment method", async () => {
    const mine = await raw(y, 'POST', '', { confirmation_token_id: 'tok_visa', set_default: true, return_url: 'https://shop.example.com/' });
    expect(mine.status).toBe(201);
    await rejects404(polar.customerPortal.customers.deletePaymentMethod(sec(x), { id: mine.body.id }));
    await rejects404(polar.customerPortal.customers.deletePaymentMethod(sec(z), { id: mine.body.id }));
    expect((await raw(x, 'GET')).body.items.map((m: any) => m.id)).not.toContain(mine.body.id);
    expect((await raw(z, 'GET')).body.items).toEqual([]);
    expect((await raw(y, 'GET')).body.items.map((m: any) => m.id)).toEqual([mine.body.id]);
  });

  it('refuses declined cards and incomplete bodies', async () => {
    const declined = await raw(z, 'POST', '', {
      confirmation_token_id: 'tok_chargeDeclined',
      set_default: true,
      return_url: 'https://shop.example.com/',
    });
    expect(declined.status).toBe(400);
    expect(declined.body.error).toBe('PaymentError');
    const unknown = await raw(z, 'POST', '', { confirmation_token_id: 'tok_nope', set_default: true, return_url: 'https://shop.example.com/' });
    expect(unknown.status).toBe(400);
    const missing = await raw(z, 'POST', '', { confirmation_token_id: 'tok_visa' });
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((d: any) => d.loc.join('.')).sort()).toEqual(['body.return_url', 'body.set_default']);
    expect((await raw(z, 'GET')).body.items).toEqual([]);
  });

  it("keeps a subscriber's last card, which renewals charge", async () => {
    const saved = await raw(w, 'GET');
    expect(saved.body.items.map((m: any) => [m.card.last4, m.default])).toEqual([['4242', true]]);
    const refused = await raw(w, 'DELETE', `/${saved.body.items[0].id}`);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('PaymentMethodInUseByActiveSubscription');

    const master = await raw(w, 'POST', '', { confirmation_token_id: 'tok_mastercard', set_default: false, return_url: 'https://shop.example.com/' });
    expect(master.body.default).toBe(false);
    expect((await raw(w, 'DELETE', `/${saved.body.items[0].id}`)).status).toBe(204);
    const after = await raw(w, 'GET');
    expect(after.body.items.map((m: any) => [m.id, m.default])).toEqual([[master.body.id, true]]);
  });

  it('needs a customer session', async () => {
    expect((await call(srv.url, null, 'GET', '/v1/customer-portal/customers/me/payment-methods')).status).toBe(401);
    expect((await call(srv.url, a.token, 'GET', '/v1/customer-portal/customers/me/payment-methods')).status).toBe(403);
  });
});

describe('orders', () => {
  it("lists the customer's own orders with filters and sorting", async () => {
    const all = await polar.customerPortal.orders.list(sec(x), {});
    expect(all.result.items.map((o) => o.id).sort()).toEqual([x.order.id, xPoster.order.id].sort());
    const first = all.result.items.find((o) => o.id === x.order.id)!;
    expect(first.product.name).toBe('Field handbook');
    expect(first.product.organization.id).toBe(a.organization.id);
    expect(first.amount).toBe(1900);

    const byQuery = await polar.customerPortal.orders.list(sec(x), { query: 'poster' });
    expect(byQuery.result.items.map((o) => o.id)).toEqual([xPoster.order.id]);
    const byProduct = await polar.customerPortal.orders.list(sec(x), { productId: handbook.id });
    expect(byProduct.result.items.map((o) => o.id)).toEqual([x.order.id]);
    const recurring = await polar.customerPortal.orders.list(sec(x), { productBillingType: 'recurring' });
    expect(recurring.result.items).toEqual([]);
    const oneTime = await polar.customerPortal.orders.list(sec(x), { productPriceType: 'one_time', organizationId: a.organization.id });
    expect(oneTime.result.items).toHaveLength(2);
    const otherOrg = await polar.customerPortal.orders.list(sec(x), { organizationId: b.organization.id });
    expect(otherOrg.result.items).toEqual([]);

    const byAmount = await polar.customerPortal.orders.list(sec(x), { sorting: ['-amount'] });
    expect(byAmount.result.items.map((o) => o.id)).toEqual([x.order.id, xPoster.order.id]);
    const byProductName = await polar.customerPortal.orders.list(sec(x), { sorting: ['-product'] });
    expect(byProductName.result.items.map((o) => o.id)).toEqual([xPoster.order.id, x.order.id]);
    for (const key of ['organization', 'subscription', '-created_at']) {
      const res = await call(srv.url, x.customerSessionToken, 'GET', `/v1/customer-portal/orders/?sorting=${key}`);
      expect(res.status).toBe(200);
      expect(res.body.items).toHaveLength(2);
    }
    expect((await call(srv.url, x.customerSessionToken, 'GET', '/v1/customer-portal/orders/?sorting=customer')).status).toBe(422);
  });

  it('gets one order and hides other customers\u2019 orders', async () => {
    const o = await polar.customerPortal.orders.get(sec(x), { id: x.order.id });
    expect(o.customerId).toBe(x.customerId);
    expect(o.productId).toBe(handbook.id);
    await rejects404(polar.customerPortal.orders.get(sec(y), { id: x.order.id }));
    await rejects404(polar.customerPortal.orders.get(sec(z), { id: x.order.id }));
    await rejects404(polar.customerPortal.orders.invoice(sec(y), { id: x.order.id }));
    const yours = await polar.customerPortal.orders.list(sec(y), {});
    expect(yours.result.items.map((i) => i.id)).toEqual([y.order.id]);
    const theirs = await polar.customerPortal.orders.list(sec(z), {});
    expect(theirs.result.items.map((i) => i.id)).toEqual([z.order.id]);
    // The raw read model keeps the seller's metadata to the seller.
    const raw = await call(srv.url, x.customerSessionToken, 'GET', `/v1/customer-portal/orders/${x.order.id}`);
    expect(raw.body).not.toHaveProperty('metadata');
    expect(raw.body.total_amount).toBe(x.order.total_amount);
  });

  it("downloads the order's PDF invoice", async () => {
    const { url } = await polar.customerPortal.orders.invoice(sec(x), { id: x.order.id });
    const res = await fetch(url);
    expect(res.status).toBe(200);
    const pdf = Buffer.from(await res.arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdfText(pdf);
    expect(text).toContain('Xavier Buyer');
    expect(text).toContain('Field handbook');
    expect(text).toContain(a.organization.name);
    expect(text).toContain(usd(x.order.total_amount));
    // The seller's invoice of the same order is the same document.
    const sellers = await call(srv.url, a.token, 'GET', `/v1/orders/${x.order.id}/invoice`);
    const again = Buffer.from(await (await fetch(sellers.body.url)).arrayBuffer());
    expect(again.equals(pdf)).toBe(true);
  });
});
