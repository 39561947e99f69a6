/**
 * Issue #23.1: an anonymous buyer who types an existing customer's email on a public checkout gets a
 * customer session that reaches only what that checkout bought, never the customer's earlier orders,
 * subscriptions, license keys, downloadables, saved cards or profile. Driven through
 * `@polar-sh/sdk` 0.29.3 as the attack was reported, for a paid and a free product.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { startTestServer, type TestServer } from '../harness.ts';
import { uploadFile } from '../grants/helpers.ts';
import {
  call,
  createBenefit,
  email,
  fullSession,
  openCheckout,
  orderOf,
  productWith,
  securitySeller,
  until,
  type Seller,
} from './helpers.ts';

let srv: TestServer;
let s: Seller;
let pub: Polar;

/** What the victim holds before the attack. */
const victim = {
  email: '',
  customerId: '',
  orderId: '',
  subscriptionId: '',
  grantIds: [] as string[],
  licenseKeyId: '',
  paymentMethodId: '',
  paymentMethodIds: [] as string[],
};
let attackBenefitId: string;

beforeAll(async () => {
  srv = await startTestServer({ env: { DATABASE_POOL_MAX: '8' } });
  s = await securitySeller(srv);
  pub = new Polar({ serverURL: srv.url });

  const license = await createBenefit(srv, s, { type: 'license_keys', description: 'Licence', properties: { prefix: 'vic' } });
  const fileId = await uploadFile(srv, s, 'private-handbook.txt', Buffer.from('the victim bought this'));
  const files = await createBenefit(srv, s, { type: 'downloadables', description: 'Handbook', properties: { files: [fileId] } });
  const custom = await createBenefit(srv, s, { type: 'custom', description: 'Thanks', properties: { note: 'hello' } });
  attackBenefitId = custom.id;

  // The victim subscribes (card), then the seller records their full profile.
  victim.email = email('victim');
  const product = await productWith(srv, s, { benefits: [license.id, files.id], recurring: true });
  const checkout = await openCheckout(srv, s, product);
  const confirmed = await call(srv.url, null, 'POST', `/v1/checkouts/client/${checkout.client_secret}/confirm`, {
    customer_email: victim.email,
    customer_name: 'Victoria Victim',
    customer_billing_address: { country: 'US', line1: '1 Private Lane', city: 'Springfield', postal_code: '12345', state: 'US-IL' },
    confirmation_token_id: 'tok_visa',
  });
  expect(confirmed.status).toBe(200);
  victim.customerId = confirmed.body.customer_id;
  const order = await orderOf(srv, s, checkout.id);
  victim.orderId = order.id;
  victim.subscriptionId = order.subscription_id!;

  const full = await fullSession(srv, s, victim.customerId);
  const grants = await until(async () => {
    const res = await pub.customerPortal.benefitGrants.list(full, {});
    const items = res.result.items;
    return items.length === 2 && items.every((g) => g.isGranted) ? items : null;
  }, 120_000);
  victim.grantIds = grants.map((g) => g.id);
  victim.licenseKeyId = (await pub.customerPortal.licenseKeys.list(full, {})).result.items[0]!.id;
  const card = await pub.customerPortal.customers.addPaymentMethod(full, {
    confirmationTokenId: 'tok_mastercard',
    setDefault: true,
    returnUrl: 'https://shop.example.com/return',
  });
  victim.paymentMethodId = card.id;
  victim.paymentMethodIds = (await pub.customerPortal.customers.getPaymentMethods(full, {})).result.items.map((p) => p.id).sort();
}, 240_000);

afterAll(async () => {
  await srv?.close();
});

/**
 * A 403 NotPermitted (the SDK declares no typed 403 on these calls, so it raises its generic error
 * carrying the status and the body).
 */
async function refused(call: Promise<unknown>) {
  const err = await call.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SDKError);
  expect((err as SDKError).statusCode).toBe(403);
  expect(JSON.parse((err as SDKError).body).error).toBe('NotPermitted');
}

describe('what a full session of the victim sees (the data the attack must not reach)', () => {
  it('has orders, a subscription, grants, a license key, a downloadable and a saved card', async () => {
    const full = await fullSession(srv, s, victim.customerId);
    expect((await pub.customerPortal.orders.list(full, {})).result.items.map((o) => o.id)).toEqual([victim.orderId]);
    expect((await pub.customerPortal.subscriptions.list(full, {})).result.items.map((x) => x.id)).toEqual([victim.subscriptionId]);
    expect((await pub.customerPortal.licenseKeys.list(full, {})).result.items).toHaveLength(1);
    expect((await pub.customerPortal.downloadables.list(full, {})).result.items).toHaveLength(1);
    expect((await pub.customerPortal.customers.getPaymentMethods(full, {})).result.items.map((p) => p.id)).toContain(victim.paymentMethodId);
    expect((await pub.customerPortal.customers.get(full)).name).toBe('Victoria Victim');
  });
});

describe.each([
  { kind: 'paid', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }], token: 'tok_visa' as string | undefined },
  { kind: 'free', prices: [{ amount_type: 'free' }], token: undefined },
])('an anonymous buyer confirms a $kind checkout with the victim’s email', ({ prices, token }) => {
  let sec: { customerSession: string };
  let attackOrderId: string;

  beforeAll(async () => {
    const product = await productWith(srv, s, { benefits: [attackBenefitId], prices });
    const checkout = await openCheckout(srv, s, product);
    const confirmed = await pub.checkouts.clientConfirm({
      clientSecret: checkout.client_secret,
      checkoutConfirmStripe: {
        customerEmail: victim.email,
        customerName: 'Mallory Attacker',
        customerBillingAddress: { country: 'US' },
        ...(token ? { confirmationTokenId: token } : {}),
      },
    });
    // The purchase is recorded on the customer with that email, as before.
    expect(confirmed.customerId).toBe(victim.customerId);
    expect(confirmed.customerSessionToken).toMatch(/^polar_cst_/);
    sec = { customerSession: confirmed.customerSessionToken };
    attackOrderId = (await orderOf(srv, s, checkout.id)).id;
  }, 180_000);

  it('lists only the order this checkout created', async () => {
    const orders = await pub.customerPortal.orders.list(sec, {});
    expect(orders.result.items.map((o) => o.id)).toEqual([attackOrderId]);
    expect((await pub.customerPortal.orders.get(sec, { id: attackOrderId })).id).toBe(attackOrderId);
  });

  it('cannot read the victim’s earlier order or its invoice', async () => {
    await expect(pub.customerPortal.orders.get(sec, { id: victim.orderId })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(pub.customerPortal.orders.invoice(sec, { id: victim.orderId })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('sees none of the victim’s license keys, downloadables or grants', async () => {
    expect((await pub.customerPortal.licenseKeys.list(sec, {})).result.items).toEqual([]);
    await expect(pub.customerPortal.licenseKeys.get(sec, { id: victim.licenseKeyId })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await pub.customerPortal.downloadables.list(sec, {})).result.items).toEqual([]);
    // The grant this checkout's order brings (its custom benefit), once the workflow wrote it; only it.
    const grants = await until(async () => {
      const items = (await pub.customerPortal.benefitGrants.list(sec, {})).result.items;
      return items.length ? items : null;
    }, 120_000);
    expect(grants.map((g) => [g.benefitId, g.orderId])).toEqual([[attackBenefitId, attackOrderId]]);
    expect(grants.map((g) => g.id)).not.toContain(victim.grantIds[0]);
    expect(grants.map((g) => g.id)).not.toContain(victim.grantIds[1]);
    for (const id of victim.grantIds) {
      await expect(pub.customerPortal.benefitGrants.get(sec, { id })).rejects.toBeInstanceOf(ResourceNotFound);
    }
  });

  it('sees no saved card and cannot add or delete one', async () => {
    expect((await pub.customerPortal.customers.getPaymentMethods(sec, {})).result.items).toEqual([]);
    await refused(
      pub.customerPortal.customers.addPaymentMethod(sec, {
        confirmationTokenId: 'tok_visa',
        setDefault: true,
        returnUrl: 'https://shop.example.com/return',
      }),
    );
    await refused(pub.customerPortal.customers.deletePaymentMethod(sec, { id: victim.paymentMethodId }));
    const full = await fullSession(srv, s, victim.customerId);
    const cards = (await pub.customerPortal.customers.getPaymentMethods(full, {})).result.items;
    expect(cards.map((p) => p.id).sort()).toEqual(victim.paymentMethodIds);
  });

  it('cannot see or cancel the victim’s subscription', async () => {
    expect((await pub.customerPortal.subscriptions.list(sec, {})).result.items).toEqual([]);
    await expect(pub.customerPortal.subscriptions.get(sec, { id: victim.subscriptionId })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(
      pub.customerPortal.subscriptions.update(sec, { id: victim.subscriptionId, customerSubscriptionUpdate: { cancelAtPeriodEnd: true } }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(pub.customerPortal.subscriptions.cancel(sec, { id: victim.subscriptionId })).rejects.toBeInstanceOf(ResourceNotFound);
    const seen = await call(srv.url, s.token, 'GET', `/v1/subscriptions/${victim.subscriptionId}`);
    expect(seen.body.status).toBe('active');
    expect(seen.body.cancel_at_period_end).toBe(false);
  });

  it('shows the details typed in the checkout, not the victim’s profile, and cannot change the profile', async () => {
    const me = await pub.customerPortal.customers.get(sec);
    expect(me.name).toBe('Mallory Attacker');
    expect(me.billingAddress?.line1 ?? null).toBeNull();
    await refused(pub.customerPortal.customers.update(sec, { name: 'Mallory', email: email('mallory') }));
    const stored = await call(srv.url, s.token, 'GET', `/v1/customers/${victim.customerId}`);
    expect(stored.body.name).toBe('Victoria Victim');
    expect(stored.body.email).toBe(victim.email);
    expect(stored.body.billing_address.line1).toBe('1 Private Lane');
  });
});

describe('a checkout-scoped session of a new subscriber', () => {
  it('reads its subscription and grants, may cancel and uncancel it, but not change its plan', async () => {
    const license = await createBenefit(srv, s, { type: 'license_keys', description: 'Club licence', properties: {} });
    const product = await productWith(srv, s, { benefits: [license.id], recurring: true });
    const other = await productWith(srv, s, { benefits: [], recurring: true });
    const checkout = await openCheckout(srv, s, product);
    const confirmed = await pub.checkouts.clientConfirm({
      clientSecret: checkout.client_secret,
      checkoutConfirmStripe: {
        customerEmail: email('subscriber'),
        customerName: 'Sam Subscriber',
        customerBillingAddress: { country: 'US' },
        confirmationTokenId: 'tok_visa',
      },
    });
    const sec = { customerSession: confirmed.customerSessionToken };
    const order = await orderOf(srv, s, checkout.id);
    const subscriptions = (await pub.customerPortal.subscriptions.list(sec, {})).result.items;
    expect(subscriptions.map((x) => x.id)).toEqual([order.subscription_id]);
    const keys = await until(async () => (await pub.customerPortal.licenseKeys.list(sec, {})).result.items[0]);
    expect((await pub.customerPortal.licenseKeys.get(sec, { id: keys.id })).id).toBe(keys.id);

    const canceled = await pub.customerPortal.subscriptions.update(sec, {
      id: order.subscription_id!,
      customerSubscriptionUpdate: { cancelAtPeriodEnd: true },
    });
    expect(canceled.cancelAtPeriodEnd).toBe(true);
    const resumed = await pub.customerPortal.subscriptions.update(sec, {
      id: order.subscription_id!,
      customerSubscriptionUpdate: { cancelAtPeriodEnd: false },
    });
    expect(resumed.cancelAtPeriodEnd).toBe(false);
    // The SDK expects only AlreadyCanceledSubscription as a 403 here: read the answer raw.
    const change = await call(srv.url, sec.customerSession, 'PATCH', `/v1/customer-portal/subscriptions/${order.subscription_id}`, {
      product_id: other,
    });
    expect(change.status).toBe(403);
    expect(change.body.error).toBe('NotPermitted');
  }, 180_000);
});
