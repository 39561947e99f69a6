/**
 * The hosted checkout in Chromium against the real stack (sandbox processor): paying with Stripe's
 * test cards, declines that keep the form, pay-what-you-want bounds, discount codes whose totals come
 * from the API, required custom fields, free products, a keyboard-only and a phone-width purchase,
 * and the checkout embedded in a page of another origin. With PAYMENT_PROCESSOR=stripe: Stripe's
 * Payment Element instead of the sandbox form, and a clear message when Stripe.js cannot load (it
 * cannot here: js.stripe.com does not resolve). axe-core runs on every page.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Checkout } from '../../api/src/modules/checkouts/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe-server.ts';
import { expectAccessible, fillCard, launchBrowser, newPage, PHONE, shop, shot, tabTo, until, type Shop } from './portal-fixtures.ts';

let srv: TestServer;
let browser: Browser;
let s: Shop;
let licensed: { id: string };
beforeAll(async () => {
  [srv, browser] = await Promise.all([startTestServer({ env: { SERVE_UI: 'true' } }), launchBrowser()]);
  s = await shop(srv);
  const benefit = await s.licenseBenefit('Pro license key');
  licensed = await s.product({ name: 'Pro licence', description: 'Lifetime licence for one developer.', prices: [{ amount_type: 'fixed', price_amount: 4900 }] }, [benefit.id]);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function open(page: Page, clientSecret: string) {
  await page.goto(`${srv.url}/checkout/${clientSecret}`);
  await page.getByRole('form', { name: 'Checkout' }).waitFor();
}

async function fillBuyer(page: Page, email: string) {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Name on card').fill('Bea Buyer');
}

describe('hosted checkout', () => {
  it('buys with 4242 4242 4242 4242 and shows the license key on the confirmation page', async () => {
    const c = await s.checkout({ product_id: licensed.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await page.getByRole('heading', { level: 1, name: 'Pro licence' }).waitFor();
    await page.getByText('Test mode').first().waitFor();
    await expect(page.getByTestId('checkout-total').textContent()).resolves.toBe('$49.00');
    await expectAccessible(page, 'checkout');
    await shot(page, 'checkout-1-form');

    await fillBuyer(page, 'paying-buyer@example.com');
    await fillCard(page, '4242 4242 4242 4242');
    await expect(page.getByText('Visa', { exact: true }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Pay $49.00' }).click();

    await page.getByRole('heading', { name: 'Thank you for your purchase!' }).waitFor();
    const key = page.getByLabel('License key', { exact: true });
    await key.waitFor();
    expect(await key.textContent()).toMatch(/^PRO-[0-9A-F-]{36}$/);
    await page.getByRole('button', { name: 'Copy license key' }).waitFor();
    await page.getByRole('link', { name: 'Go to your customer portal' }).waitFor();
    await expectAccessible(page, 'confirmation');
    await shot(page, 'checkout-2-confirmation');

    // The portal holds the checkout's token only: it says how to see everything else.
    await page.getByRole('link', { name: 'Go to your customer portal' }).click();
    await page.getByRole('button', { name: 'Sign in to see all your purchases' }).waitFor();
    await expectAccessible(page, 'portal with a checkout token');
    await shot(page, 'checkout-3-portal-checkout-scoped');
    await context.close();
  });

  it('keeps the form filled and shows the processor’s message on a decline and on insufficient funds', async () => {
    const c = await s.checkout({ product_id: licensed.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await fillBuyer(page, 'declined-buyer@example.com');
    await fillCard(page, '4000 0000 0000 0002');
    await page.getByRole('button', { name: 'Pay $49.00' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your card was declined.' }).waitFor();
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe('declined-buyer@example.com');
    await expect(page.getByLabel('Card number').inputValue()).resolves.toBe('4000 0000 0000 0002');
    await expectAccessible(page, 'declined');
    await shot(page, 'checkout-4-declined');

    await page.getByLabel('Card number').fill('4000 0000 0000 9995');
    await page.getByRole('button', { name: 'Pay $49.00' }).click();
    await page.getByRole('alert').filter({ hasText: 'Your card has insufficient funds.' }).waitFor();
    await expect(page.getByLabel('Name on card').inputValue()).resolves.toBe('Bea Buyer');
    await shot(page, 'checkout-5-insufficient-funds');
    expect((await s.checkoutStatus(c.id)).status).toBe('open');
    await context.close();
  });

  it('refuses a pay-what-you-want amount below the minimum, then totals what the API says', async () => {
    const p = await s.product({ name: 'Tip jar', prices: [{ amount_type: 'custom', minimum_amount: 500, maximum_amount: 10000, preset_amount: 1500 }] });
    const c = await s.checkout({ product_id: p.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    const amount = page.getByLabel('Name a fair price (USD)');
    await expect(amount.inputValue()).resolves.toBe('15.00');
    await amount.fill('2');
    await page.getByLabel('Email').click();
    await page.getByText('The amount must be at least $5.00.').waitFor();
    await expect(amount.getAttribute('aria-invalid')).resolves.toBe('true');
    await expectAccessible(page, 'pay what you want error');
    await shot(page, 'checkout-6-pwyw-error');

    await amount.fill('25');
    await page.getByLabel('Email').click();
    await until(async () => (await page.getByTestId('checkout-total').textContent()) === '$25.00');
    expect((await s.checkoutStatus(c.id)).total_amount).toBe(2500);
    await context.close();
  });

  it('applies a discount code and shows the totals the API computed', async () => {
    await s.created('POST', '/v1/discounts/', { name: 'Launch', code: 'LAUNCH20', type: 'percentage', basis_points: 2000, duration: 'once' });
    const c = await s.checkout({ product_id: licensed.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await page.getByLabel('Discount code').fill('NOPE');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('Discount code does not exist.').waitFor();

    await page.getByLabel('Discount code').fill('LAUNCH20');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByText('LAUNCH20', { exact: false }).first().waitFor();
    const api = await s.checkoutStatus(c.id);
    expect(api.total_amount).toBe(3920);
    await until(async () => (await page.getByTestId('checkout-total').textContent()) === '$39.20');
    await expect(page.getByTestId('checkout-discount').textContent()).resolves.toBe('−$9.80');
    await expect(page.getByTestId('checkout-subtotal').textContent()).resolves.toBe('$49.00');
    await page.getByRole('button', { name: 'Pay $39.20' }).waitFor();
    await expectAccessible(page, 'discount applied');
    await shot(page, 'checkout-7-discount');
    await context.close();
  });

  it('blocks payment until a required custom field is filled', async () => {
    const field = await s.created('POST', '/v1/custom-fields/', { type: 'text', slug: `company-${Date.now()}`, name: 'Company', properties: { form_label: 'Company name' } });
    const terms = await s.created('POST', '/v1/custom-fields/', { type: 'checkbox', slug: `terms-${Date.now()}`, name: 'Terms', properties: { form_label: 'I accept the terms' } });
    const p = await s.product({
      name: 'Team plan',
      prices: [{ amount_type: 'fixed', price_amount: 1200 }],
      attached_custom_fields: [{ custom_field_id: field.id, required: true }, { custom_field_id: terms.id, required: true }],
    });
    const c = await s.checkout({ product_id: p.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await fillBuyer(page, 'fields-buyer@example.com');
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Pay $12.00' }).click();
    await page.getByText('This field is required.').waitFor();
    await page.getByText('This box must be checked.').waitFor();
    await expect(page.evaluate(() => document.activeElement?.getAttribute('name'))).resolves.toBe(field.slug);
    expect((await s.checkoutStatus(c.id)).status).toBe('open');
    await expectAccessible(page, 'custom field errors');
    await shot(page, 'checkout-8-custom-field-required');

    await page.getByLabel('Company name').fill('Acme Ltd');
    await page.getByLabel('I accept the terms').check();
    await page.getByRole('button', { name: 'Pay $12.00' }).click();
    await page.getByRole('heading', { name: 'Thank you for your purchase!' }).waitFor();
    await context.close();
  });

  it('completes a free product without a card, using the keyboard only', async () => {
    const p = await s.product({ name: 'Starter kit', prices: [{ amount_type: 'free' }] });
    const c = await s.checkout({ product_id: p.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await expect(page.getByLabel('Card number').count()).resolves.toBe(0);
    await tabTo(page, 'Email');
    await page.keyboard.type('free-buyer@example.com');
    await tabTo(page, 'Get it for free', 'button');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Thank you for your purchase!' }).waitFor();
    await shot(page, 'checkout-9-free');
    await context.close();
  });

  it('switches between the products a checkout offers, with the API’s totals', async () => {
    const yearly = await s.product({ name: 'Pro yearly', recurring_interval: 'year', prices: [{ amount_type: 'fixed', price_amount: 9900 }] });
    const monthly = await s.product({ name: 'Pro monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 990 }] });
    const c = await s.checkout({ products: [monthly.id, yearly.id] });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    const options = page.getByRole('group', { name: 'Choose an option' });
    await options.getByRole('radio', { name: /Pro monthly/ }).waitFor();
    await expect(page.getByTestId('checkout-total').textContent()).resolves.toBe('$9.90');
    await options.getByRole('radio', { name: /Pro yearly/ }).check();
    await until(async () => (await page.getByTestId('checkout-total').textContent()) === '$99.00');
    await page.getByRole('button', { name: 'Subscribe — $99.00 / year' }).waitFor();
    expect((await s.checkoutStatus(c.id)).total_amount).toBe(9900);
    await expectAccessible(page, 'product switcher');
    await shot(page, 'checkout-14-switcher');
    await context.close();
  });

  it('says what to do when the checkout expired while the buyer was paying', async () => {
    const c = await s.checkout({ product_id: licensed.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await fillBuyer(page, 'late-buyer@example.com');
    await fillCard(page, '4242 4242 4242 4242');
    await srv.deps.orm.em.fork().nativeUpdate(Checkout, { id: c.id }, { expiresAt: new Date(Date.now() - 1000) });
    await page.getByRole('button', { name: 'Pay $49.00' }).click();
    await page.getByRole('alert').filter({ hasText: 'This checkout has expired' }).waitFor();
    await page.getByText('Nothing was charged.').waitFor();
    await expect(page.getByLabel('Email').inputValue()).resolves.toBe('late-buyer@example.com');
    await shot(page, 'checkout-15-expired');
    await context.close();
  });

  it('works at phone width (390×844)', async () => {
    const c = await s.checkout({ product_id: licensed.id });
    const { context, page } = await newPage(browser, PHONE);
    await open(page, c.client_secret);
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await expectAccessible(page, 'checkout on a phone');
    await shot(page, 'checkout-10-phone-form');
    await fillBuyer(page, 'phone-buyer@example.com');
    await fillCard(page, '4242 4242 4242 4242');
    await page.getByRole('button', { name: 'Pay $49.00' }).click();
    await page.getByLabel('License key', { exact: true }).waitFor();
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await shot(page, 'checkout-11-phone-confirmation');
    await context.close();
  });
});

describe('embedded checkout', () => {
  let host: Server;
  let hostUrl: string;
  beforeAll(async () => {
    host = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://x');
      const checkoutUrl = u.searchParams.get('checkout') ?? '';
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><html lang="en"><head><title>Seller site</title>
<script src="${srv.url}/portal/embed.js"></script></head>
<body><main><h1>Seller site</h1><a href="${checkoutUrl}" data-emporia-checkout>Buy now</a></main>
<script>
  window.received = [];
  window.addEventListener('message', function (e) { if (e.data && e.data.type === 'POLAR_CHECKOUT') window.received.push({ origin: e.origin, event: e.data.event, data: e.data }); });
  document.addEventListener('emporia:checkout:success', function (e) { window.successEvent = e.detail; });
</script></body></html>`);
    });
    await new Promise<void>((r) => host.listen(0, '127.0.0.1', () => r()));
    hostUrl = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => host?.close(r));
  });

  it('runs in an overlay iframe on the embed origin and posts loaded, confirmed and success to the parent', async () => {
    const c = await s.checkout({ product_id: licensed.id, embed_origin: hostUrl });
    const { context, page } = await newPage(browser);
    await page.goto(`${hostUrl}/?checkout=${encodeURIComponent(`${srv.url}/checkout/${c.client_secret}`)}`);
    await page.getByRole('link', { name: 'Buy now' }).click();
    const frame = page.frameLocator('iframe[title="Checkout"]');
    await frame.getByRole('form', { name: 'Checkout' }).waitFor();
    await until(() => page.evaluate(() => (window as any).received.some((m: any) => m.event === 'loaded')));
    await shot(page, 'checkout-12-embedded');

    await frame.getByLabel('Email').fill('embedded-buyer@example.com');
    await frame.getByLabel('Name on card').fill('Em Bedded');
    await fillCard(frame, '4242 4242 4242 4242');
    await frame.getByRole('button', { name: 'Pay $49.00' }).click();
    await frame.getByLabel('License key', { exact: true }).waitFor();
    const received = await until(async () => {
      const r = await page.evaluate(() => (window as any).received as { origin: string; event: string; data: any }[]);
      return r.some((m) => m.event === 'success') ? r : null;
    });
    expect(received.map((m) => m.event)).toEqual(expect.arrayContaining(['loaded', 'confirmed', 'success']));
    expect(new Set(received.map((m) => m.origin))).toEqual(new Set([srv.url]));
    const success = received.find((m) => m.event === 'success')!.data;
    expect(success).toMatchObject({ type: 'POLAR_CHECKOUT', event: 'success', redirect: false });
    await until(() => page.evaluate(() => !!(window as any).successEvent));
    await shot(page, 'checkout-13-embedded-success');
    await context.close();
  });
});

describe('a buyer who types an existing customer’s email (issue #23)', () => {
  it('gets a portal that shows only what this checkout bought, never the customer’s earlier orders or cards', async () => {
    // The victim bought a paid plan earlier and has a saved card.
    const victimEmail = `victim-${Date.now()}@example.com`;
    const paid = await s.product({ name: 'Victim private plan', prices: [{ amount_type: 'fixed', price_amount: 2500 }] });
    const earlier = await s.checkout({ product_id: paid.id });
    const confirmed = await s.call('POST', `/v1/checkouts/client/${earlier.client_secret}/confirm`, { customer_email: victimEmail, customer_name: 'Vic Tim', customer_billing_address: { country: 'US' }, confirmation_token_id: 'tok_visa' }, null);
    expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
    await until(async () => (await s.checkoutStatus(earlier.id)).status === 'succeeded');

    // The attacker takes a free product through the hosted checkout and types the victim's email.
    const free = await s.product({ name: 'Attacker freebie', prices: [{ amount_type: 'free' }] });
    const c = await s.checkout({ product_id: free.id });
    const { context, page } = await newPage(browser);
    await open(page, c.client_secret);
    await page.getByLabel('Email').fill(victimEmail);
    await page.getByRole('button', { name: 'Get it for free' }).click();
    await page.getByRole('heading', { name: 'Thank you for your purchase!' }).waitFor();
    await page.getByRole('link', { name: 'Go to your customer portal' }).click();
    await page.getByRole('button', { name: 'Sign in to see all your purchases' }).waitFor();

    await page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name: 'Orders' }).click();
    await page.getByRole('link', { name: 'Attacker freebie' }).waitFor();
    await expect(page.getByText('Victim private plan').count()).resolves.toBe(0);
    await shot(page, 'checkout-takeover-orders');

    await page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name: 'Payment methods' }).click();
    await page.getByText('No saved cards.').waitFor();
    await expect(page.getByText('4242').count()).resolves.toBe(0);
    await context.close();
  });
});

describe('hosted checkout with PAYMENT_PROCESSOR=stripe', () => {
  let stripeSrv: TestServer;
  let stripe: FakeStripe;
  let shop2: Shop;
  let product: { id: string };
  beforeAll(async () => {
    stripe = await startFakeStripe();
    stripeSrv = await startTestServer({
      worker: false,
      env: {
        SERVE_UI: 'true',
        PAYMENT_PROCESSOR: 'stripe',
        STRIPE_SECRET_KEY: stripe.secretKey,
        STRIPE_API_BASE: stripe.url,
        STRIPE_PUBLISHABLE_KEY: 'pk_test_localcheckout',
      },
    });
    shop2 = await shop(stripeSrv);
    product = await shop2.product({ name: 'Stripe-paid licence', prices: [{ amount_type: 'fixed', price_amount: 4900 }] });
  }, 120_000);
  afterAll(async () => {
    await stripeSrv?.close();
    await stripe?.close();
  });

  it("loads Stripe's Payment Element from js.stripe.com and says clearly when it cannot", async () => {
    const config = await (await fetch(`${stripeSrv.url}/v1/customer-portal/config`)).json();
    expect(config).toMatchObject({ payment_processor: 'stripe', stripe_publishable_key: 'pk_test_localcheckout' });
    const c = await shop2.checkout({ product_id: product.id });
    const { context, page } = await newPage(browser);
    // js.stripe.com is unreachable from this machine (DNS fails); the browser is told so outright.
    const stripeJs: string[] = [];
    await page.route('https://js.stripe.com/**', (route) => {
      stripeJs.push(route.request().url());
      return route.abort('namenotresolved');
    });
    await page.goto(`${stripeSrv.url}/checkout/${c.client_secret}`);
    await page.getByRole('form', { name: 'Checkout' }).waitFor();
    await page.getByText('The secure card form could not be loaded from Stripe (js.stripe.com).', { exact: false }).waitFor();
    // @stripe/stripe-js asks for its release train's script (https://js.stripe.com/<train>/stripe.js).
    expect(stripeJs.length).toBeGreaterThan(0);
    expect(stripeJs.filter((u) => !/^https:\/\/js\.stripe\.com\/[a-z]+\/stripe\.js$/.test(u))).toEqual([]);
    // Not the sandbox form: no test-mode banner, no card number field of ours.
    expect(await page.getByRole('region', { name: 'Test mode' }).count()).toBe(0);
    expect(await page.getByLabel('Card number').count()).toBe(0);
    await page.getByLabel('Email').fill('stripe-buyer@example.com');
    await page.getByLabel('Name on card').fill('Bea Buyer');
    await page.getByRole('button', { name: 'Pay $49.00' }).click();
    await page.getByText('The card form is not ready: it could not be loaded from Stripe.').waitFor();
    await expectAccessible(page, 'stripe checkout without Stripe.js');
    await shot(page, 'checkout-stripe-unreachable');
    // Nothing reached the processor.
    expect(stripe.requests.filter((r) => r.path.includes('payment_intents'))).toEqual([]);
    await context.close();
  });

  it("uses the same card entry in the portal's Add a card", async () => {
    const customer = await shop2.created('POST', '/v1/customers/', { email: `stripe-portal-${Date.now()}@example.com`, name: 'Stella Stripe' });
    const session = await shop2.call('POST', '/v1/customer-sessions/', { customer_id: customer.id });
    const { context, page } = await newPage(browser);
    const stripeJs: string[] = [];
    await page.route('https://js.stripe.com/**', (route) => {
      stripeJs.push(route.request().url());
      return route.abort('namenotresolved');
    });
    await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, stripeSrv.url));
    await page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name: 'Payment methods', exact: true }).click();
    await page.getByRole('button', { name: 'Add a card' }).click();
    await page.getByText('The secure card form could not be loaded from Stripe (js.stripe.com).', { exact: false }).waitFor();
    expect(stripeJs.length).toBeGreaterThan(0);
    expect(await page.getByLabel('Card number').count()).toBe(0);
    expect(await page.getByRole('region', { name: 'Test mode' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Save card' }).click();
    await page.getByText('The card form is not ready: it could not be loaded from Stripe.').waitFor();
    await expectAccessible(page, 'portal add card with stripe, Stripe.js unreachable');
    await shot(page, 'portal-stripe-add-card-unreachable');
    await context.close();
  });

  it('says card payments are not set up when the publishable key is missing', async () => {
    Object.assign(stripeSrv.deps.cfg, { STRIPE_PUBLISHABLE_KEY: undefined });
    try {
      const c = await shop2.checkout({ product_id: product.id });
      const { context, page } = await newPage(browser);
      await page.goto(`${stripeSrv.url}/checkout/${c.client_secret}`);
      await page.getByText('Card payments are not set up for this store yet').waitFor();
      expect(await page.getByLabel('Card number').count()).toBe(0);
      await context.close();
    } finally {
      Object.assign(stripeSrv.deps.cfg, { STRIPE_PUBLISHABLE_KEY: 'pk_test_localcheckout' });
    }
  });
});
