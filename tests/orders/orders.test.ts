/**
 * The seller's orders: every filter and sorting key of `GET /v1/orders/` (through `@polar-sh/sdk`
 * 0.29.3 and raw HTTP), tenant isolation, and the PDF invoice (`GET /v1/orders/{id}/invoice`): a
 * real PDF in the object store with the seller, the buyer, the address, the line and the totals,
 * generated once and reused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { buyerEmail, call, orderSeller, pdfText, product, purchase, usd, type Purchase, type Seller } from './helpers.ts';
import { invoiceKey } from '../../api/src/modules/orders/invoice.ts';

let srv: TestServer;
let a: Seller;
let b: Seller;
let alpha: { id: string; name: string };
let beta: { id: string; name: string };
let discountId: string;
let one: Purchase; // alpha, customer "c-…"
let two: Purchase; // beta (recurring), customer "a-…"
let three: Purchase; // alpha with the discount, customer "b-…"
let other: Purchase; // seller b

beforeAll(async () => {
  // Several purchases confirm at once: each holds a connection while it charges.
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '8' } });
  [a, b] = await Promise.all([orderSeller(srv), orderSeller(srv)]);
  [alpha, beta] = await Promise.all([product(srv, a, 'Alpha guide', 2500), product(srv, a, 'Beta club', 1000, 'month')]);
  const d = await call(srv.url, a.token, 'POST', '/v1/discounts/', {
    name: 'Launch week',
    type: 'percentage',
    basis_points: 1000,
    duration: 'once',
  });
  expect(d.status).toBe(201);
  discountId = d.body.id;
  const gamma = await product(srv, b, 'Gamma kit', 700);
  [one, two, three, other] = await Promise.all([
    purchase(srv, a, alpha.id, buyerEmail('c-carol'), { name: 'Carol Client' }),
    purchase(srv, a, beta.id, buyerEmail('a-anna')),
    purchase(srv, a, alpha.id, buyerEmail('b-bert'), { discountId }),
    purchase(srv, b, gamma.id, buyerEmail('z-zed')),
  ]);
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

const ids = (items: { id: string }[]) => items.map((o) => o.id);
async function list(s: Seller, qs: string) {
  const res = await call(srv.url, s.token, 'GET', `/v1/orders/${qs}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { items: any[]; pagination: { total_count: number; max_page: number } };
}

describe('listing orders', () => {
  it("lists only the caller's organization's orders, through the SDK", async () => {
    const page = await a.polar.orders.list({ limit: 100 });
    expect(new Set(ids(page.result.items))).toEqual(new Set([one.order.id, two.order.id, three.order.id]));
    expect(page.result.pagination.totalCount).toBe(3);
    const order = page.result.items.find((o) => o.id === three.order.id)!;
    expect(order.discountId).toBe(discountId);
    expect(order.amount).toBe(2250);
  });

  it('filters by product, billing type and price type', async () => {
    expect(ids((await list(a, `?product_id=${alpha.id}`)).items).sort()).toEqual([one.order.id, three.order.id].sort());
    expect(ids((await list(a, '?product_billing_type=recurring')).items)).toEqual([two.order.id]);
    expect(ids((await list(a, '?product_billing_type=one_time')).items).sort()).toEqual([one.order.id, three.order.id].sort());
    expect(ids((await list(a, '?product_price_type=recurring')).items)).toEqual([two.order.id]);
    expect((await list(a, '?product_price_type=one_time&product_billing_type=recurring')).items).toEqual([]);
    expect((await list(a, `?product_id=${beta.id}&product_price_type=one_time`)).items).toEqual([]);
    const sdk = await a.polar.orders.list({ productPriceType: 'one_time', productBillingType: ['one_time', 'recurring'] });
    expect(ids(sdk.result.items).sort()).toEqual([one.order.id, three.order.id].sort());
  });

  it('filters by discount, customer and checkout', async () => {
    expect(ids((await list(a, `?discount_id=${discountId}`)).items)).toEqual([three.order.id]);
    expect(ids((await list(a, `?customer_id=${two.customerId}`)).items)).toEqual([two.order.id]);
    expect(ids((await list(a, `?checkout_id=${one.checkoutId}&checkout_id=${two.checkoutId}`)).items).sort()).toEqual(
      [one.order.id, two.order.id].sort(),
    );
    // Another organization's ids filter to nothing, never to their orders.
    expect((await list(a, `?customer_id=${other.customerId}`)).items).toEqual([]);
    expect((await list(a, `?organization_id=${b.organization.id}`)).items).toEqual([]);
  });

  it('sorts by every key, ascending and descending', async () => {
    const order = async (key: string) => ids((await list(a, `?sorting=${key}`)).items);
    // Customers by email: a-anna (two), b-bert (three), c-carol (one).
    expect(await order('customer')).toEqual([two.order.id, three.order.id, one.order.id]);
    expect(await order('-customer')).toEqual([one.order.id, three.order.id, two.order.id]);
    // Products by name: Alpha guide (one, three), Beta club (two).
    expect((await order('product')).at(-1)).toBe(two.order.id);
    expect((await order('-product'))[0]).toBe(two.order.id);
    // Net amounts: 1000 (two), 2250 (three), 2500 (one).
    expect(await order('amount')).toEqual([two.order.id, three.order.id, one.order.id]);
    expect(await order('-net_amount')).toEqual([one.order.id, three.order.id, two.order.id]);
    // Only `three` has a discount, only `two` a subscription: they sort to one end.
    const byDiscount = await order('discount');
    expect([byDiscount[0], byDiscount.at(-1)]).toContain(three.order.id);
    const bySubscription = await order('-subscription');
    expect([bySubscription[0], bySubscription.at(-1)]).toContain(two.order.id);
    const created = await order('created_at');
    expect(new Set(created)).toEqual(new Set([one.order.id, two.order.id, three.order.id]));
    const times = async (key: string) => ((await list(a, `?sorting=${key}`)).items as { created_at: string }[]).map((i) => i.created_at);
    const ascending = await times('created_at');
    expect(new Set(ascending).size).toBe(3);
    expect(ascending).toEqual([...ascending].sort());
    expect(await times('-created_at')).toEqual([...ascending].reverse());
    const sdk = await a.polar.orders.list({ sorting: ['-customer'] });
    expect(ids(sdk.result.items)).toEqual([one.order.id, three.order.id, two.order.id]);
  });

  it('rejects unknown sorting keys and filter values with 422', async () => {
    const bad = await call(srv.url, a.token, 'GET', '/v1/orders/?sorting=email');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'sorting']);
    expect((await call(srv.url, a.token, 'GET', '/v1/orders/?product_price_type=weekly')).status).toBe(422);
  });

  it("answers 404 for another organization's order and its invoice", async () => {
    expect((await call(srv.url, a.token, 'GET', `/v1/orders/${other.order.id}`)).status).toBe(404);
    const inv = await call(srv.url, a.token, 'GET', `/v1/orders/${other.order.id}/invoice`);
    expect(inv.status).toBe(404);
    expect(inv.body.error).toBe('ResourceNotFound');
  });
});

describe('order invoices', () => {
  it('returns a URL to a real PDF with the seller, buyer, address, line and totals', async () => {
    const res = await a.polar.orders.invoice({ id: three.order.id });
    const pdf = Buffer.from(await (await fetch(res.url)).arrayBuffer());
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = pdfText(pdf);
    const o = three.order;
    expect(o.subtotal_amount).toBe(2500);
    expect(o.discount_amount).toBe(250);
    expect(text).toContain('Invoice');
    expect(text).toContain(a.organization.name);
    expect(text).toContain('Bea Buyer');
    expect(text).toContain(o.customer.email);
    expect(text).toContain('1 Market Street');
    expect(text).toContain('94105 San Francisco');
    expect(text).toContain('Alpha guide');
    expect(text).toContain('Discount (Launch week)');
    expect(text).toContain(usd(2500));
    expect(text).toContain(usd(-250));
    expect(text).toContain(usd(o.net_amount));
    expect(text).toContain(usd(o.tax_amount));
    expect(text).toContain(usd(o.total_amount));
  });

  it('is generated once and reused by later calls', async () => {
    const first = await call(srv.url, a.token, 'GET', `/v1/orders/${one.order.id}/invoice`);
    expect(first.status).toBe(200);
    const key = invoiceKey({ id: one.order.id, organization: { id: a.organization.id } });
    const stat1 = await srv.deps.storage.client.statObject(srv.deps.storage.bucket, key);
    const second = await call(srv.url, a.token, 'GET', `/v1/orders/${one.order.id}/invoice`);
    expect(second.status).toBe(200);
    const stat2 = await srv.deps.storage.client.statObject(srv.deps.storage.bucket, key);
    expect(stat2.etag).toBe(stat1.etag);
    expect(stat2.lastModified.getTime()).toBe(stat1.lastModified.getTime());
    const a1 = Buffer.from(await (await fetch(first.body.url)).arrayBuffer());
    const a2 = Buffer.from(await (await fetch(second.body.url)).arrayBuffer());
    expect(a2.equals(a1)).toBe(true);
    expect(pdfText(a2)).toContain('Carol Client');
    expect(pdfText(a2)).toContain(usd(one.order.total_amount));
  });

  it('needs orders:read', async () => {
    const noScope = await call(srv.url, null, 'GET', `/v1/orders/${one.order.id}/invoice`);
    expect(noScope.status).toBe(401);
  });
});
