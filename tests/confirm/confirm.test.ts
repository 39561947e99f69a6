/**
 * Checkout confirmation end to end: the buyer's confirm through `@polar-sh/sdk` 0.29.3 charges the
 * sandbox processor, the checkout-confirm workflow creates the order (and subscription), grants the
 * benefits and mails the receipt; declines, free products and tenant isolation (concurrency:
 * tests/concurrency).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { PaymentError } from '@polar-sh/sdk/models/errors/paymenterror.js';
import { AlreadyActiveSubscriptionError } from '@polar-sh/sdk/models/errors/alreadyactivesubscriptionerror.js';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { Order } from '../../api/src/modules/orders/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCharge, SandboxRefund } from '../../api/src/modules/payments/sandbox-entities.ts';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { checkoutConfirmSchema, confirmCheckout } from '../../api/src/modules/checkouts/confirm.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, waitForMail, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, fulfilled, newCheckout, until, type Seller } from './helpers.ts';

let srv: TestServer;
let a: Seller;
let b: Seller;
let pub: Polar;

beforeAll(async () => {
  srv = await startTestServer();
  a = await confirmSeller(srv);
  b = await confirmSeller(srv);
  pub = new Polar({ serverURL: srv.url });
});
afterAll(async () => {
  await srv?.close();
});

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;
const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

async function charges(checkoutId: string) {
  const em = srv.deps.orm.em.fork();
  return em.find(SandboxCharge, { idempotencyKey: { $like: `checkout:${checkoutId}:charge%` } });
}

describe('confirming a one-time purchase through the SDK', () => {
  it('charges, creates the order, issues the license key and mails the receipt', async () => {
    const benefit = await call(srv.url, a.token, 'POST', '/v1/benefits/', {
      type: 'license_keys',
      description: 'License',
      properties: { prefix: 'emp', limit_usage: 10 },
    });
    expect(benefit.status).toBe(201);
    const product = await createProduct(srv.url, a.token, { name: 'Desktop app', prices: fixed(2500) });
    expect((await call(srv.url, a.token, 'POST', `/v1/products/${product.id}/benefits`, { benefits: [benefit.body.id] })).status).toBe(200);

    const checkout = await a.polar.checkouts.create({ productId: product.id, metadata: { campaign: 'launch' } });
    const buyerEmail = email('buyer');
    await pub.checkouts.clientUpdate({
      clientSecret: checkout.clientSecret,
      checkoutUpdatePublic: { customerEmail: buyerEmail, customerName: 'Bea Buyer', customerBillingAddress: { country: 'US' } },
    });
    const confirmed = await pub.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: { confirmationTokenId: 'tok_visa' },
    });
    expect(confirmed.status).toBe('confirmed');
    expect(confirmed.customerSessionToken).toMatch(/^polar_cst_/);
    expect(confirmed.customerId).not.toBeNull();

    const orders = await until(async () => {
      const page = await a.polar.orders.list({ organizationId: a.organization.id, checkoutId: checkout.id });
      return page.result.items.length ? page.result.items : null;
    });
    expect(orders).toHaveLength(1);
    const order = orders[0]!;
    expect(order).toMatchObject({
      status: 'paid',
      billingReason: 'purchase',
      amount: 2500,
      taxAmount: 0,
      refundedAmount: 0,
      currency: 'usd',
      productId: product.id,
      productPriceId: product.prices[0]!.id,
      discountId: null,
      subscriptionId: null,
      checkoutId: checkout.id,
      customerId: confirmed.customerId,
      userId: confirmed.customerId,
      metadata: { campaign: 'launch' },
      billingAddress: { country: 'US' },
    });
    expect(order.customer.email).toBe(buyerEmail);
    expect(order.user).toMatchObject({ id: confirmed.customerId, email: buyerEmail, publicName: 'Bea Buyer' });
    expect(order.product.name).toBe('Desktop app');
    expect(await a.polar.orders.get({ id: order.id })).toMatchObject({ id: order.id, status: 'paid' });

    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    const state = await a.polar.customers.getState({ id: order.customerId });
    expect(state.email).toBe(buyerEmail);
    expect(state.activeSubscriptions).toEqual([]);
    expect(state.grantedBenefits).toHaveLength(1);
    expect(state.grantedBenefits[0]).toMatchObject({ benefitId: benefit.body.id, benefitType: 'license_keys' });

    const keys = await call(srv.url, a.token, 'GET', `/v1/license-keys?organization_id=${a.organization.id}`);
    expect(keys.body.items).toHaveLength(1);
    expect(keys.body.items[0]).toMatchObject({ customer_id: order.customerId, benefit_id: benefit.body.id, status: 'granted', limit_usage: 10 });
    expect(keys.body.items[0].key).toMatch(/^EMP-[0-9A-F-]{36}$/);

    expect(await charges(checkout.id)).toHaveLength(1);
    const mails = await waitForMail(buyerEmail, 20_000, 'receipt');
    expect(mails.some((m) => m.text.includes(order.id))).toBe(true);

    const types = (await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: a.organization.id })).map((e) => e.type);
    for (const t of ['order.created', 'order.paid', 'benefit_grant.created', 'checkout.updated', 'customer.created', 'customer.state_changed']) {
      expect(types).toContain(t);
    }
  });

  it('asks for the email, the name, the country and a card when payment is required', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Book', prices: fixed(900) });
    const c = await newCheckout(srv, a, product.id);
    const res = await confirmRaw(srv, c.client_secret, {});
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining(['body.customer_email', 'body.customer_name', 'body.customer_billing_address', 'body.confirmation_token_id']),
    );
  });
});

describe('confirming a monthly subscription', () => {
  it('creates an active subscription with its first order, saves the card and refuses a second one', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(1900) });
    const checkout = await a.polar.checkouts.create({ productId: product.id });
    const buyerEmail = email('subscriber');
    const confirmed = await pub.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: {
        customerEmail: buyerEmail,
        customerName: 'Sam Subscriber',
        customerBillingAddress: { country: 'US' },
        confirmationTokenId: 'tok_visa',
      },
    });
    expect(confirmed.status).toBe('confirmed');

    const subs = await until(async () => {
      const page = await a.polar.subscriptions.list({ organizationId: a.organization.id, customerId: confirmed.customerId! });
      return page.result.items.length ? page.result.items : null;
    });
    expect(subs).toHaveLength(1);
    const sub = subs[0]!;
    expect(sub).toMatchObject({
      status: 'active',
      amount: 1900,
      currency: 'usd',
      recurringInterval: 'month',
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endedAt: null,
      productId: product.id,
      priceId: product.prices[0]!.id,
      checkoutId: checkout.id,
      customerId: confirmed.customerId,
    });
    // The period ends on the same day of the next month, or on that month's last day when it is shorter
    // (Jan 31 → Feb 28/29), at the same time of day.
    const start = sub.currentPeriodStart;
    const nextMonth = start.getUTCMonth() + 1;
    const lastDayOfNextMonth = new Date(Date.UTC(start.getUTCFullYear(), nextMonth + 1, 0)).getUTCDate();
    const expectedEnd = new Date(
      Date.UTC(
        start.getUTCFullYear(),
        nextMonth,
        Math.min(start.getUTCDate(), lastDayOfNextMonth),
        start.getUTCHours(),
        start.getUTCMinutes(),
        start.getUTCSeconds(),
        start.getUTCMilliseconds(),
      ),
    );
    expect(sub.currentPeriodEnd!.toISOString()).toBe(expectedEnd.toISOString());
    expect(sub.product.prices).toHaveLength(1);
    expect((await a.polar.subscriptions.get({ id: sub.id })).id).toBe(sub.id);

    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    const subEvents = (await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: a.organization.id, type: { $like: 'subscription.%' } }))
      .filter((e) => (e.data as { id: string }).id === sub.id)
      .map((e) => e.type);
    expect(subEvents).toEqual(expect.arrayContaining(['subscription.created', 'subscription.active']));
    const orders = await a.polar.orders.list({ organizationId: a.organization.id, customerId: confirmed.customerId! });
    expect(orders.result.items).toHaveLength(1);
    expect(orders.result.items[0]).toMatchObject({ billingReason: 'subscription_create', subscriptionId: sub.id, status: 'paid', amount: 1900 });
    expect(orders.result.items[0]!.subscription).toMatchObject({ id: sub.id, status: 'active' });

    const state = await a.polar.customers.getState({ id: confirmed.customerId! });
    expect(state.activeSubscriptions.map((s) => s.id)).toEqual([sub.id]);
    // The same state by the seller's own id for the customer.
    const externalId = `user-${randomUUID()}`;
    expect((await call(srv.url, a.token, 'PATCH', `/v1/customers/${confirmed.customerId}`, { external_id: externalId })).status).toBe(200);
    const byExternal = await a.polar.customers.getStateExternal({ externalId });
    expect(byExternal.id).toBe(confirmed.customerId);
    expect(byExternal.activeSubscriptions.map((s) => s.id)).toEqual([sub.id]);

    const methods = await srv.deps.orm.em.fork().find(PaymentMethod, { customer: confirmed.customerId! });
    expect(methods).toHaveLength(1);
    expect(methods[0]).toMatchObject({ brand: 'visa', last4: '4242', isDefault: true });

    const active = await call(srv.url, a.token, 'GET', `/v1/subscriptions/?active=true&customer_id=${confirmed.customerId}`);
    expect(active.body.pagination.total_count).toBe(1);
    const recurringOnly = await call(srv.url, a.token, 'GET', `/v1/orders/?product_billing_type=one_time&customer_id=${confirmed.customerId}`);
    expect(recurringOnly.body.pagination.total_count).toBe(0);

    // The same buyer cannot start a second subscription in this organization.
    const again = await a.polar.checkouts.create({ productId: product.id });
    await expect(
      pub.checkouts.clientConfirm({
        clientSecret: again.clientSecret,
        checkoutConfirmStripe: { ...{ customerEmail: buyerEmail, customerName: 'Sam', customerBillingAddress: { country: 'US' } }, confirmationTokenId: 'tok_visa' },
      }),
    ).rejects.toBeInstanceOf(AlreadyActiveSubscriptionError);
    expect(await charges(again.id)).toHaveLength(0);
  });
});

describe('a declined card', () => {
  it('answers PaymentError, keeps the checkout open and writes nothing; another card then works', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Course', prices: fixed(4900) });
    const checkout = await a.polar.checkouts.create({ productId: product.id });
    const buyerEmail = email('declined');
    const attempt = pub.checkouts.clientConfirm({
      clientSecret: checkout.clientSecret,
      checkoutConfirmStripe: {
        customerEmail: buyerEmail,
        customerName: 'Dee Clined',
        customerBillingAddress: { country: 'US' },
        confirmationTokenId: 'tok_chargeDeclined',
      },
    });
    await expect(attempt).rejects.toBeInstanceOf(PaymentError);
    const raw = await confirmRaw(srv, checkout.clientSecret, { ...buyer(buyerEmail), confirmation_token_id: 'tok_chargeDeclined' });
    expect(raw.status).toBe(400);
    expect(raw.body).toEqual({ error: 'PaymentError', detail: 'Your card was declined.' });
    const poor = await confirmRaw(srv, checkout.clientSecret, { ...buyer(buyerEmail), confirmation_token_id: 'tok_chargeDeclinedInsufficientFunds' });
    expect(poor.status).toBe(400);
    expect(poor.body).toEqual({ error: 'PaymentError', detail: 'Your card has insufficient funds.' });

    const after = await pub.checkouts.clientGet({ clientSecret: checkout.clientSecret });
    expect(after.status).toBe('open');
    expect(after.customerId).toBeNull();
    const em = srv.deps.orm.em.fork();
    // What the buyer typed was kept on the open checkout, and announced.
    expect(after.customerEmail).toBe(buyerEmail);
    const announced = (await em.find(OutboxEvent, { organizationId: a.organization.id, type: 'checkout.updated' }))
      .map((e) => e.data as { id: string; status: string; customer_email: string | null })
      .filter((d) => d.id === checkout.id);
    expect(announced.some((d) => d.status === 'open' && d.customer_email === buyerEmail)).toBe(true);
    expect(await em.count(Order, { checkout: checkout.id })).toBe(0);
    expect(await em.count(Customer, { organization: a.organization.id, email: buyerEmail })).toBe(0);
    expect((await charges(checkout.id)).filter((c) => c.status === 'succeeded')).toHaveLength(0);

    const ok = await confirmRaw(srv, checkout.clientSecret, { ...buyer(buyerEmail), confirmation_token_id: 'tok_visa' });
    expect(ok.status).toBe(200);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    expect((await charges(checkout.id)).filter((c) => c.status === 'succeeded')).toHaveLength(1);
  });
});

describe('the customer a purchase goes to', () => {
  it("is the checkout's own customer whatever email is typed, filled in where it had no name", async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Plugin', prices: fixed(1500) });
    const known = await call(srv.url, a.token, 'POST', '/v1/customers/', { email: email('known') });
    expect(known.status).toBe(201);
    const checkout = await newCheckout(srv, a, product.id, { customer_id: known.body.id });
    const typed = email('typed');
    const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(typed), confirmation_token_id: 'tok_visa' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.customer_id).toBe(known.body.id);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    const em = srv.deps.orm.em.fork();
    expect(await em.count(Customer, { organization: a.organization.id, email: typed })).toBe(0);
    const orders = await call(srv.url, a.token, 'GET', `/v1/orders/?checkout_id=${checkout.id}`);
    expect(orders.body.items.map((o: { customer_id: string }) => o.customer_id)).toEqual([known.body.id]);
    const customer = await call(srv.url, a.token, 'GET', `/v1/customers/${known.body.id}`);
    expect(customer.body.name).toBe('Bea Buyer');
    const updated = await em.find(OutboxEvent, { organizationId: a.organization.id, type: 'customer.updated' });
    expect(updated.some((e) => (e.data as { id: string }).id === known.body.id && (e.data as { name: string }).name === 'Bea Buyer')).toBe(true);
  });

  it('refuses, before charging, an email whose new customer would take an external id another customer holds', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Theme', prices: fixed(900) });
    const ext = `ext-${randomUUID()}`;
    // Created while no customer had the external id; one gets it before the buyer pays.
    const checkout = await newCheckout(srv, a, product.id, { customer_external_id: ext });
    const owner = email('owner');
    expect((await call(srv.url, a.token, 'POST', '/v1/customers/', { email: owner, external_id: ext })).status).toBe(201);

    const refused = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('stranger')), confirmation_token_id: 'tok_visa' });
    expect(refused.status).toBe(422);
    expect(JSON.stringify(refused.body)).toContain('external customer ID');
    expect(await charges(checkout.id)).toHaveLength(0);
    expect((await pub.checkouts.clientGet({ clientSecret: checkout.client_secret })).status).toBe('open');

    // The customer who holds the external id can pay; the purchase is theirs.
    const ok = await confirmRaw(srv, checkout.client_secret, { ...buyer(owner), confirmation_token_id: 'tok_visa' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    const mine = await call(srv.url, a.token, 'GET', `/v1/customers/external/${ext}`);
    expect(ok.body.customer_id).toBe(mine.body.id);
    expect((await charges(checkout.id)).filter((c) => c.status === 'succeeded')).toHaveLength(1);
  });
});

describe('a confirmation that fails after the charge', () => {
  it('gives the money back at once, and paying again (same token) charges anew', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Fragile', prices: fixed(1200) });
    const checkout = await newCheckout(srv, a, product.id);
    const body = checkoutConfirmSchema.parse({ ...buyer(email('fragile')), confirmation_token_id: 'tok_visa' });
    // Step 3's transaction fails for a reason that is not a rule (as a database error would).
    await expect(
      confirmCheckout(srv.deps.orm.em.fork(), srv.deps, checkout.client_secret, body, () => {
        throw new Error('database went away');
      }),
    ).rejects.toThrow('database went away');
    const first = await charges(checkout.id);
    expect(first.map((c) => c.status)).toEqual(['succeeded']);
    const em = srv.deps.orm.em.fork();
    expect(await em.count(SandboxRefund, { chargeId: first[0]!.id })).toBe(1);
    expect((await pub.checkouts.clientGet({ clientSecret: checkout.client_secret })).status).toBe('open');

    const again = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('fragile')), confirmation_token_id: 'tok_visa' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
    const all = await charges(checkout.id);
    expect(all).toHaveLength(2);
    const confirmed = await em.findOneOrFail(Checkout, { id: checkout.id }, { refresh: true });
    expect(confirmed.processorChargeId).not.toBe(first[0]!.id);
  });
});

// Concurrent confirms and discount limits at the sizes: tests/concurrency.

describe('free products', () => {
  it('confirm with just an email gives a paid order of 0 and charges nothing', async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Freebie', prices: [{ amount_type: 'free' }] });
    const c = await newCheckout(srv, a, product.id);
    const buyerEmail = email('free');
    const res = await confirmRaw(srv, c.client_secret, { customer_email: buyerEmail });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'confirmed', is_payment_required: false, amount: null });
    expect(res.body.customer_session_token).toMatch(/^polar_cst_/);
    expect(await fulfilled(srv, a, c.id)).toBe('succeeded');
    const orders = await a.polar.orders.list({ organizationId: a.organization.id, productId: product.id });
    expect(orders.result.items).toHaveLength(1);
    expect(orders.result.items[0]).toMatchObject({ amount: 0, taxAmount: 0, status: 'paid', billingReason: 'purchase' });
    expect(await charges(c.id)).toHaveLength(0);
  });
});

describe('isolation', () => {
  it("another organization's orders and subscriptions are 404 and not listed", async () => {
    const product = await createProduct(srv.url, a.token, { name: 'Team plan', recurring_interval: 'month', prices: fixed(500) });
    const c = await newCheckout(srv, a, product.id);
    const res = await confirmRaw(srv, c.client_secret, { ...buyer(email('iso')), confirmation_token_id: 'tok_mastercard' });
    expect(res.status).toBe(200);
    expect(await fulfilled(srv, a, c.id)).toBe('succeeded');
    const order = (await call(srv.url, a.token, 'GET', `/v1/orders/?checkout_id=${c.id}`)).body.items[0];
    expect(order.subscription_id).toBeTruthy();
    expect((await call(srv.url, b.token, 'GET', `/v1/orders/${order.id}`)).body).toMatchObject({ error: 'ResourceNotFound' });
    expect((await call(srv.url, b.token, 'GET', `/v1/subscriptions/${order.subscription_id}`)).status).toBe(404);
    expect((await call(srv.url, b.token, 'GET', `/v1/orders/?checkout_id=${c.id}`)).body.pagination.total_count).toBe(0);
    expect((await call(srv.url, b.token, 'GET', `/v1/subscriptions/?organization_id=${a.organization.id}`)).body.items).toEqual([]);
    expect((await call(srv.url, a.token, 'GET', `/v1/orders/${order.id}`)).status).toBe(200);
  });
});
