/**
 * The seller console in headless Chromium against the real stack, as a seller uses it: signs up,
 * creates an organization, creates a license-key benefit and a pay-what-you-want product with it,
 * copies its checkout link, a buyer pays through that link (public checkout API), the seller sees
 * the order on the dashboard and in Orders, downloads the invoice and refunds it (a refusal first);
 * then sells a monthly plan and cancels, uncancels and revokes the subscription; creates an access
 * token and a webhook endpoint and sees a delivery, redelivers it; and checks the console on a phone.
 * axe-core runs on every main page. Screenshots: .ci/out/screenshots/admin-*.png.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import {
  apiCall,
  buy,
  captureFailures,
  choose,
  cookieHeader,
  expectAccessible,
  launch,
  newContext,
  openRow,
  reloadUntilVisible,
  shot,
  until,
} from './admin-helpers.ts';

const PASSWORD = 'correct horse battery';
/** A 1×1 PNG. */
const PIXEL_PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let receiver: Server;
const received: { type: string; body: string }[] = [];

const seller = { email: uniqueEmail('console'), username: `seller_${Date.now().toString(36)}`, org: `Console Shop ${Date.now().toString(36)}` };
let organizationId = '';

const go = (hash: string) => page.goto(`${srv.url}/dashboard/#${hash}`);
const notification = (text: string | RegExp) => page.getByRole('alert').filter({ hasText: text });
const api = async <T = any>(method: string, pathname: string, body?: unknown) =>
  apiCall<T>(srv.url, { cookie: await cookieHeader(context) }, method, pathname, body);

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      try {
        received.push({ type: (JSON.parse(body) as { type: string }).type, body });
      } catch {
        received.push({ type: 'unparsed', body });
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

captureFailures('admin-console', () => page);

afterAll(async () => {
  await browser?.close();
  await new Promise((r) => receiver?.close(r));
  await srv?.close();
});

describe('seller console', () => {
  it('signs up, creates an organization, sells a product with a license key, shows the order, invoice and refund', async () => {
    // Sign-up, from the sign-in page.
    await go('/login');
    await expectAccessible(page, 'sign-in');
    await page.getByRole('link', { name: 'Create an account' }).click();
    await page.getByLabel(/^Your name/).fill('Selma Seller');
    await page.getByLabel(/^Email/).fill(seller.email);
    await page.getByLabel(/^Username/).fill(seller.username);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await expectAccessible(page, 'sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();

    // First run: no organization yet.
    await page.getByRole('heading', { name: 'Create your organization' }).waitFor();
    await page.getByLabel(/^Organization name/).fill(seller.org);
    await expectAccessible(page, 'create organization');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
    expect(await page.getByRole('combobox', { name: 'Organization' }).textContent()).toBe(seller.org);
    await page.getByText(/Please verify your email address/).waitFor();
    organizationId = ((await api('GET', '/v1/organizations/')).body.items as { id: string }[])[0]!.id;

    // A license-key benefit.
    await page.getByRole('menuitem', { name: 'Benefits' }).click();
    await page.getByRole('link', { name: 'Create' }).click();
    await choose(page, /^Type/, 'License keys');
    await page.getByLabel(/^Description/).fill('Pro license');
    await page.getByLabel('Key prefix').fill('PRO');
    await page.getByLabel('Activation limit').fill('3');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Prefix PRO, never expires, 3 activation(s), unlimited usage').waitFor();

    // A pay-what-you-want product with that benefit.
    await page.getByRole('menuitem', { name: 'Products' }).click();
    await page.getByRole('link', { name: 'Create' }).click();
    await page.getByLabel(/^Name/).fill('Indie toolkit');
    await page.getByLabel('Description').fill('Everything an indie maker needs.');
    await choose(page, /^Price type/, 'Pay what you want');
    await page.getByLabel('Minimum').fill('5');
    await page.getByLabel('Suggested amount').fill('15');
    await page.getByRole('combobox', { name: 'Benefits' }).click();
    await page.getByRole('option', { name: 'Pro license' }).click();
    // An image, uploaded through the files API (multipart, presigned part URLs).
    await page.locator('input[type=file][accept="image/*"]').setInputFiles({ name: 'cover.png', mimeType: 'image/png', buffer: PIXEL_PNG });
    await page.getByRole('button', { name: 'Remove cover.png' }).waitFor();
    await expectAccessible(page, 'product create');
    await shot(page, 'admin-product-create');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Pay what you want (min. USD 5.00)').waitFor();
    await page.getByText('Pro license · License keys').waitFor();
    await page.getByRole('img', { name: 'cover.png' }).waitFor();

    // Its checkout link, copied.
    await page.getByRole('button', { name: 'Copy checkout link' }).click();
    await notification(/Checkout link copied/).waitFor();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toMatch(/\/v1\/checkout-links\/[^/]+\/redirect$/);
    await page.getByRole('tab', { name: 'Checkout links' }).click();
    await page.getByText(link).waitFor();
    await expectAccessible(page, 'product page');
    await shot(page, 'admin-product-show');

    // A buyer opens the link and pays 15.00 with a test card.
    const redirect = await fetch(`${srv.url}${new URL(link).pathname}`, { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const clientSecret = new URL(redirect.headers.get('location')!).pathname.split('/').pop()!;
    const buyer = { email: uniqueEmail('buyer'), name: 'Bea Buyer' };
    await buy(srv.url, clientSecret, buyer, { amount: 1500 });
    await until(async () => ((await api('GET', `/v1/orders/?organization_id=${organizationId}`)).body.items as unknown[]).length > 0);

    // The dashboard shows it.
    await page.getByRole('menuitem', { name: 'Dashboard' }).click();
    const latest = page.getByRole('table', { name: 'Latest orders' });
    await reloadUntilVisible(page, latest.getByText(buyer.email));
    await latest.getByText('USD 15.00').waitFor();
    // Every column of the latest orders fits its card: the status is not cut off at the card's edge.
    const card = page.locator('.MuiCard-root').filter({ has: latest });
    const cardBox = (await card.boundingBox())!;
    const statusBox = (await latest.getByText('paid', { exact: true }).boundingBox())!;
    expect(statusBox.x + statusBox.width).toBeLessThanOrEqual(cardBox.x + cardBox.width);
    await page.getByRole('heading', { name: 'Orders', exact: true, level: 2 }).waitFor();
    // No subscriptions yet: the recurring revenue axis still reads in whole dollars, not cents.
    const mrr = page.getByRole('img', { name: 'Monthly recurring revenue chart' });
    const tickLabels = mrr.locator('.recharts-yAxis-tick-labels .recharts-cartesian-axis-tick-value');
    await tickLabels.first().waitFor();
    const ticks = await tickLabels.allTextContents();
    expect(ticks.length).toBeGreaterThan(1);
    for (const tick of ticks) expect(tick).toMatch(/^USD\s\d+$/);
    await expectAccessible(page, 'dashboard');
    await shot(page, 'admin-dashboard');

    // Orders, then the order page.
    await page.getByRole('menuitem', { name: 'Orders' }).click();
    const row = page.getByRole('row').filter({ hasText: buyer.email });
    await row.getByText('USD 15.00').first().waitFor();
    await expectAccessible(page, 'orders');
    await openRow(page, row, /#\/orders\/[^/]+\/show/);
    await page.getByRole('table', { name: 'Order lines' }).getByText('Indie toolkit').waitFor();

    // The invoice: the console asks for its URL and opens the PDF.
    const invoiceResponse = page.waitForResponse((r) => r.url().includes('/invoice') && r.request().method() === 'GET');
    await page.getByRole('button', { name: 'Download invoice' }).click();
    const { url: invoiceUrl } = (await (await invoiceResponse).json()) as { url: string };
    const pdf = Buffer.from(await (await fetch(invoiceUrl)).arrayBuffer());
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');

    // Refund: pre-filled with what is refundable; a refusal reads as a sentence; then the refund.
    await page.getByRole('button', { name: 'Refund' }).click();
    const dialog = page.getByRole('dialog', { name: 'Refund order' });
    expect(await dialog.getByLabel('Amount (USD)').inputValue()).toBe('15');
    await expectAccessible(page, 'refund dialog');
    await dialog.getByLabel('Amount (USD)').fill('20');
    await dialog.getByRole('button', { name: 'Refund' }).click();
    await dialog.getByText('That is more than can be refunded: at most USD 15.00 remains.').waitFor();
    await dialog.getByLabel('Amount (USD)').fill('15');
    await choose(page, 'Reason', 'Satisfaction guarantee', dialog);
    await dialog.getByRole('button', { name: 'Refund' }).click();
    await notification('Refund of USD 15.00 requested').waitFor();
    const refunds = page.getByRole('row').filter({ hasText: 'satisfaction guarantee' });
    await reloadUntilVisible(page, refunds.filter({ hasText: 'succeeded' }));
    await reloadUntilVisible(page, page.getByText('refunded', { exact: true }));
    await expectAccessible(page, 'order page');
    await shot(page, 'admin-order-refunded');

    // The buyer's customer page: what they hold, and a customer portal link to send them.
    await page.getByRole('link', { name: new RegExp(buyer.email) }).click();
    await page.getByText(/^License keys.* · since /).waitFor();
    await page.getByRole('button', { name: 'Create customer portal session' }).click();
    await page.getByRole('button', { name: 'Copy portal link' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toMatch(/^https?:\/\/.+\/portal/);
    await expectAccessible(page, 'customer page');
    await shot(page, 'admin-customer');
  }, 120_000);

  it('sells a monthly plan and cancels, uncancels and revokes the subscription from its page', async () => {
    await page.getByRole('menuitem', { name: 'Products' }).click();
    await page.getByRole('link', { name: 'Create' }).click();
    await page.getByLabel(/^Name/).fill('Team plan');
    await choose(page, /^Billing/, 'Monthly');
    await page.getByLabel(/^Amount/).fill('12');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('USD 12.00').waitFor();
    const productId = page.url().split('/products/')[1]!.split('/')[0]!;

    const checkout = await api('POST', '/v1/checkouts/', { product_id: productId });
    expect(checkout.status).toBe(201);
    const subscriber = { email: uniqueEmail('subscriber'), name: 'Sam Subscriber' };
    await buy(srv.url, checkout.body.client_secret, subscriber);
    await until(async () => ((await api('GET', `/v1/subscriptions/?organization_id=${organizationId}&active=true`)).body.items as unknown[]).length > 0);

    await page.getByRole('menuitem', { name: 'Subscriptions' }).click();
    await reloadUntilVisible(page, page.getByRole('row').filter({ hasText: subscriber.email }));
    await expectAccessible(page, 'subscriptions');
    await openRow(page, page.getByRole('row').filter({ hasText: subscriber.email }), /#\/subscriptions\/[^/]+\/show/);
    await page.getByText('USD 12.00 / month').waitFor();

    await page.getByRole('button', { name: 'Cancel at period end' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancel at the end of the period' });
    await choose(page, 'Reason', 'Too expensive', cancel);
    await cancel.getByLabel('Comment (optional)').fill('Budget cuts');
    await cancel.getByRole('button', { name: 'Cancel at period end' }).click();
    await notification('The subscription will end at the end of the period').waitFor();
    await page.getByText(/^Cancels on/).waitFor();
    await page.getByText('too expensive: Budget cuts').waitFor();
    await shot(page, 'admin-subscription-canceling');

    await page.getByRole('button', { name: 'Uncancel' }).click();
    await notification('Cancellation withdrawn').waitFor();
    await page.getByRole('button', { name: 'Cancel at period end' }).waitFor();

    await page.getByRole('button', { name: 'Revoke now' }).click();
    const revoke = page.getByRole('dialog', { name: 'Revoke this subscription now?' });
    await revoke.getByRole('button', { name: 'Revoke now' }).click();
    await notification('Subscription revoked').waitFor();
    await reloadUntilVisible(page, page.getByText('canceled', { exact: true }));
    await expectAccessible(page, 'subscription page');
    await shot(page, 'admin-subscription-revoked');
  }, 120_000);

  it('creates an access token (shown once) and a webhook endpoint, sees a delivery and redelivers it', async () => {
    // Sign out and back in with the username.
    await page.getByRole('button', { name: 'Selma Seller' }).click();
    await page.getByRole('menuitem', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to your seller console' }).waitFor();
    await page.getByLabel(/^Email or username/).fill(seller.username);
    await page.getByLabel(/^Password/).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('combobox', { name: 'Organization' }).waitFor();

    await page.getByRole('menuitem', { name: 'Access tokens' }).click();
    await page.getByRole('button', { name: 'Create token' }).click();
    const create = page.getByRole('dialog', { name: 'Create an access token' });
    await create.getByLabel('Name').fill('Production server');
    await create.getByRole('button', { name: 'Select all' }).click();
    await expectAccessible(page, 'create token');
    await create.getByRole('button', { name: 'Create token' }).click();
    const shown = page.getByRole('dialog', { name: 'Your new access token' });
    const token = (await shown.getByLabel('Access token').textContent())!.trim();
    expect(token).toMatch(/^polar_oat_/);
    await shown.getByRole('button', { name: 'Copy token' }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(token);
    await shown.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('row').filter({ hasText: 'Production server' }).getByText('All scopes').waitFor();
    await expectAccessible(page, 'access tokens');
    await shot(page, 'admin-access-tokens');
    const products = await apiCall(srv.url, { token }, 'GET', '/v1/products/');
    expect(products.status).toBe(200);

    // A webhook endpoint for product updates.
    await page.getByRole('menuitem', { name: 'Webhooks' }).click();
    await page.getByRole('link', { name: 'Add endpoint' }).click();
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    await page.getByLabel(/^Endpoint URL/).fill(receiverUrl);
    await page.getByRole('checkbox', { name: 'product.updated' }).check();
    await expectAccessible(page, 'webhook create');
    await page.getByRole('button', { name: 'Save' }).click();
    const secret = (await page.getByLabel('Signing secret').textContent())!.trim();
    expect(secret.length).toBeGreaterThanOrEqual(32);

    // An event: the seller renames a product through the API with the new token.
    const list = (await apiCall(srv.url, { token }, 'GET', '/v1/products/?sorting=name')).body.items as { id: string; name: string }[];
    const renamed = await apiCall(srv.url, { token }, 'PATCH', `/v1/products/${list[0]!.id}`, { name: 'Indie toolkit 2' });
    expect(renamed.status).toBe(200);
    await until(async () => received.some((r) => r.type === 'product.updated'));

    const delivery = page.getByRole('table', { name: 'Deliveries' }).getByRole('row').filter({ hasText: 'product.updated' });
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh deliveries' }).click();
      // Let the refetch finish before looking (a click every 250 ms cancelled each one before it answered).
      await page.getByRole('progressbar', { name: 'Loading' }).waitFor({ state: 'detached', timeout: 10_000 }).catch(() => {});
      return delivery.first().isVisible();
    });
    await delivery.first().getByText('HTTP 200').first().waitFor();
    await delivery.first().getByText(/text\/plain/).waitFor();
    await expectAccessible(page, 'webhook endpoint');
    await shot(page, 'admin-webhook-deliveries');

    const before = received.filter((r) => r.type === 'product.updated').length;
    await delivery.first().getByRole('button', { name: 'Redeliver' }).click();
    await notification('product.updated queued for redelivery').waitFor();
    await until(async () => received.filter((r) => r.type === 'product.updated').length > before);
  }, 120_000);

  it('stays usable on a phone: app bar, menu and lists', async () => {
    const phone = await newContext(browser, srv.url, { width: 390, height: 844 });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    await p.goto(`${srv.url}/dashboard/#/orders`);
    await p.getByRole('combobox', { name: 'Organization' }).waitFor();
    // One item per order: the customer, the amount, the product and the status all on the phone's
    // screen (not in a table's columns scrolled out of view), and the page does not scroll sideways.
    const order = p.getByRole('link').filter({ hasText: 'USD 15.00' }).first();
    await order.waitFor();
    expect(await order.textContent()).toContain('refunded');
    expect(await order.textContent()).toContain('Indie toolkit');
    const box = (await order.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(390);
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await expectAccessible(p, 'orders on a phone');
    await shot(p, 'admin-phone-orders');
    await order.click();
    await p.getByRole('button', { name: 'Download invoice' }).waitFor();

    await p.goto(`${srv.url}/dashboard/#/subscriptions`);
    const subscription = p.getByRole('link').filter({ hasText: 'USD 12.00 / month' }).first();
    await subscription.waitFor();
    expect(await subscription.textContent()).toContain('Team plan');
    expect(await subscription.textContent()).toContain('canceled');
    await expectAccessible(p, 'subscriptions on a phone');
    await shot(p, 'admin-phone-subscriptions');
    await subscription.click();
    await p.waitForURL(/#\/subscriptions\/[^/]+\/show/);

    await p.goto(`${srv.url}/dashboard/#/customers`);
    const customer = p.getByRole('link').filter({ hasText: 'Sam Subscriber' }).first();
    await customer.waitFor();
    expect(await customer.textContent()).toMatch(/^subscriber-/);
    await expectAccessible(p, 'customers on a phone');
    await customer.click();
    await p.waitForURL(/#\/customers\/[^/]+\/show/);

    await p.getByRole('button', { name: 'Open menu' }).click();
    await p.getByRole('menuitem', { name: 'Products' }).click();
    // The products page's own title in the app bar first: until it renders, "Team plan" can still be
    // the subscription page's product.
    await p.getByRole('banner').getByText('Products', { exact: true }).waitFor();
    await p.getByText('Team plan').waitFor();
    await shot(p, 'admin-phone-products');
    await p.getByText('Team plan').click();
    await p.getByRole('button', { name: 'Copy checkout link' }).waitFor();
    await phone.close();
  });
});
