/**
 * The portal's plan-change preview (`POST /v1/customer-portal/subscriptions/{id}/preview`) answers what
 * the change then bills: with `invoice` proration the `subscription_update` order's subtotal, tax and
 * total; with `prorate` the amount carried to the next renewal. Yearly plans: the seconds between the
 * preview and the change move the proration by far less than a cent.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { TaxRate } from '../../api/src/modules/tax-rates/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { buyerEmail, call, orderSeller, product, purchase, until, type Purchase, type Seller } from '../orders/helpers.ts';

let srv: TestServer;
let seller: Seller;
let basic: { id: string };
let pro: { id: string };
let team: { id: string };
let buyer: Purchase;
let other: Purchase;

async function settings(s: Record<string, unknown>) {
  const em = srv.deps.orm.em.fork();
  await em.nativeUpdate(Organization, { id: seller.organization.id }, { subscriptionSettings: s });
}
const portal = (p: Purchase, method: string, path: string, body?: unknown) => call(srv.url, p.customerSessionToken, method, path, body);

beforeAll(async () => {
  srv = await startTestServer();
  seller = await orderSeller(srv);
  [basic, pro, team] = await Promise.all([
    product(srv, seller, 'Basic yearly', 12_000, 'year'),
    product(srv, seller, 'Pro yearly', 30_000, 'year'),
    product(srv, seller, 'Team yearly', 90_000, 'year'),
  ]);
  const em = srv.deps.orm.em.fork();
  em.create(TaxRate, { organization: em.getReference(Organization, seller.organization.id), country: 'US', basisPoints: 825 } as never);
  await em.flush();
  [buyer, other] = await Promise.all([purchase(srv, seller, basic.id, buyerEmail('petra')), purchase(srv, seller, basic.id, buyerEmail('omar'))]);
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

const subscriptionOf = (p: Purchase) => srv.deps.orm.em.fork().findOneOrFail(Subscription, { customer: p.customerId });

describe('plan change preview', () => {
  it('previews an invoiced upgrade; the change charges exactly that', async () => {
    await settings({ allow_customer_updates: true, proration_behavior: 'invoice' });
    const sub = await subscriptionOf(buyer);
    const preview = await portal(buyer, 'POST', `/v1/customer-portal/subscriptions/${sub.id}/preview`, { product_id: pro.id });
    expect(preview.status).toBe(200);
    expect(preview.body).toMatchObject({ subscription_id: sub.id, product_id: pro.id, amount: 30_000, currency: 'usd', proration_behavior: 'invoice', next_invoice_adjustment: 0 });
    const { credit, debit, net } = preview.body.proration;
    expect(credit).toBeLessThan(0);
    expect(net).toBe(credit + debit);
    expect(net).toBeGreaterThan(0);
    const tax = preview.body.charged_now.tax_amount;
    expect(tax).toBeGreaterThan(0); // 8.25 % US tax rate of the seller
    expect(preview.body.charged_now).toEqual({ subtotal_amount: net, tax_amount: tax, total_amount: net + tax });
    // Nothing changed.
    expect((await subscriptionOf(buyer)).amount).toBe(12_000);

    const changed = await portal(buyer, 'PATCH', `/v1/customer-portal/subscriptions/${sub.id}`, { product_id: pro.id });
    expect(changed.status).toBe(200);
    const order = await until(() => srv.deps.orm.em.fork().findOne(Order, { subscription: sub.id, billingReason: 'subscription_update' }));
    expect({ subtotal_amount: order.subtotalAmount, tax_amount: order.taxAmount, total_amount: order.totalAmount }).toEqual(preview.body.charged_now);
    expect((await subscriptionOf(buyer)).amount).toBe(30_000);
  });

  it('previews a prorated upgrade; the change carries exactly that to the next renewal', async () => {
    await settings({ allow_customer_updates: true, proration_behavior: 'prorate' });
    const sub = await subscriptionOf(buyer);
    const carried = sub.pendingProrationAmount;
    const preview = await portal(buyer, 'POST', `/v1/customer-portal/subscriptions/${sub.id}/preview`, { product_id: team.id });
    expect(preview.status).toBe(200);
    expect(preview.body.proration_behavior).toBe('prorate');
    expect(preview.body.charged_now).toBeNull();
    expect(preview.body.next_invoice_adjustment).toBe(preview.body.proration.net);
    expect(preview.body.proration.net).toBeGreaterThan(0);

    expect((await portal(buyer, 'PATCH', `/v1/customer-portal/subscriptions/${sub.id}`, { product_id: team.id })).status).toBe(200);
    const after = await until(async () => {
      const s = await subscriptionOf(buyer);
      return s.product.id === team.id ? s : null;
    });
    expect(after.pendingProrationAmount - carried).toBe(preview.body.next_invoice_adjustment);
  });

  it("refuses another customer's subscription, an unknown product and a seller who does not allow changes", async () => {
    const theirs = await subscriptionOf(other);
    const foreign = await portal(buyer, 'POST', `/v1/customer-portal/subscriptions/${theirs.id}/preview`, { product_id: pro.id });
    expect(foreign.status).toBe(404);
    const unknown = await portal(other, 'POST', `/v1/customer-portal/subscriptions/${theirs.id}/preview`, { product_id: '00000000-0000-4000-8000-000000000000' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail.map((d: any) => d.loc.join('.'))).toEqual(['body.product_id']);
    await settings({ allow_customer_updates: false });
    const refused = await portal(other, 'POST', `/v1/customer-portal/subscriptions/${theirs.id}/preview`, { product_id: pro.id });
    expect(refused.status).toBe(403);
  });
});
