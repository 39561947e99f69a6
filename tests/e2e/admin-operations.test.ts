/**
 * The seller console for operators and sellers abroad, in headless Chromium against the real stack:
 * an organization admin finds "Open in Temporal" on the order, refund, checkout, subscription and
 * webhook endpoint pages, each pointing at the record's run or visibility query in TEMPORAL_UI_URL;
 * a plain member of the same organization sees none. The dashboard shows a euro shop's totals in
 * euros. The endpoint page's "Refresh deliveries" shows a delivery that came after the page loaded.
 * Screenshots: .ci/out/screenshots/admin-operations-*.png.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { addMember } from '../../api/src/auth/server-api.ts';
import { apiCall, buy, expectAccessible, launch, newContext, reloadUntilVisible, shot, until } from './admin-helpers.ts';

const TEMPORAL_UI = 'http://temporal.example.test:8233';

let srv: TestServer;
let browser: Browser;
let receiver: Server;
const received: string[] = [];

type Seller = Awaited<ReturnType<typeof seller>>;
let owner: Seller;
let orderId = '';
let checkoutId = '';
let subscriptionId = '';
let refundId = '';
let endpointId = '';

const api = <T = any>(method: string, pathname: string, body?: unknown) => apiCall<T>(srv.url, { token: owner.token }, method, pathname, body);

async function signIn(context: BrowserContext, email: string, password: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await page.goto(`${srv.url}/dashboard/#/login`);
  await page.getByLabel(/^Email or username/).fill(email);
  await page.getByLabel(/^Password/).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
  return page;
}

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false', TEMPORAL_UI_URL: TEMPORAL_UI } });
  browser = await launch();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));

  // A euro shop: a monthly plan bought once (an order, its checkout, a subscription), one refund.
  owner = await seller(srv.url, ['products:read', 'products:write', 'checkouts:read', 'checkouts:write', 'orders:read', 'refunds:read', 'refunds:write', 'subscriptions:read', 'webhooks:read', 'webhooks:write']);
  const product = await api('POST', '/v1/products/', {
    organization_id: owner.organization.id,
    name: 'Abo Plus',
    recurring_interval: 'month',
    prices: [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'eur' }],
  });
  expect(product.status, JSON.stringify(product.body)).toBe(201);
  const checkout = await api('POST', '/v1/checkouts/', { product_id: product.body.id });
  expect(checkout.status).toBe(201);
  checkoutId = checkout.body.id;
  await buy(srv.url, checkout.body.client_secret, { email: uniqueEmail('kunde'), name: 'Karla Kundin' });
  const order = await until(async () => (await api('GET', `/v1/orders/?checkout_id=${checkoutId}`)).body.items?.[0] as { id: string; subscription_id: string } | undefined);
  orderId = order.id;
  subscriptionId = order.subscription_id;
  // Refundable once the order is paid.
  refundId = await until(async () => {
    const refund = await api('POST', '/v1/refunds/', { order_id: orderId, reason: 'customer_request', amount: 100 });
    return refund.status === 201 ? (refund.body.id as string) : null;
  });
}, 180_000);

afterAll(async () => {
  for await (const run of srv.deps.temporal.workflow.list({ query: `TaskQueue = "${srv.deps.cfg.TEMPORAL_TASK_QUEUE}" AND ExecutionStatus = "Running"` })) {
    await srv.deps.temporal.workflow.getHandle(run.workflowId, run.runId).terminate('test finished').catch(() => {});
  }
  await browser?.close();
  await new Promise((r) => receiver?.close(r));
  await srv?.close();
}, 120_000);

const runUrl = (workflowId: string) => `${TEMPORAL_UI}/namespaces/${encodeURIComponent(srv.deps.cfg.TEMPORAL_NAMESPACE)}/workflows/${encodeURIComponent(workflowId)}`;
// Visibility queries are scoped to the organization by the API's template.
const queryUrl = (query: string) =>
  `${TEMPORAL_UI}/namespaces/${encodeURIComponent(srv.deps.cfg.TEMPORAL_NAMESPACE)}/workflows?query=${encodeURIComponent(`OrganizationId = "${owner.organization.id}" AND (${query})`)}`;

describe('seller console: operations', () => {
  it('shows an admin the dashboard in euros and "Open in Temporal" on order, refund, checkout, subscription and webhook pages', async () => {
    const context = await newContext(browser, srv.url);
    const page = await signIn(context, owner.email, owner.password);

    // The dashboard's totals are in the shop's currency.
    await reloadUntilVisible(page, page.getByRole('table', { name: 'Latest orders' }).getByText('EUR 19.00'));
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 3 }).waitFor();
    const revenue = page.locator('div', { has: page.getByRole('heading', { name: 'Revenue', exact: true, level: 3 }) }).last();
    await reloadUntilVisible(page, revenue.getByText(/^EUR\s?1[89]\.00$/));
    expect(await page.getByText(/USD/).count()).toBe(0);
    await expectAccessible(page, 'dashboard in euros');
    await shot(page, 'admin-operations-dashboard-eur');

    // Order: a query over the order's runs (its checkout, its subscription, its refunds).
    await page.goto(`${srv.url}/dashboard/#/orders/${orderId}/show`);
    await page.getByRole('table', { name: 'Order lines' }).waitFor();
    const orderLink = page.getByRole('link', { name: 'Open in Temporal' }).first();
    await orderLink.waitFor();
    expect(await orderLink.getAttribute('href')).toBe(queryUrl(`OrderId = "${orderId}" OR CheckoutId = "${checkoutId}" OR SubscriptionId = "${subscriptionId}"`));
    expect(await orderLink.getAttribute('target')).toBe('_blank');
    // Refund: its refund run, from its row.
    const refundRow = page.getByRole('row').filter({ hasText: /customer request/i });
    await refundRow.getByRole('link', { name: 'Open in Temporal' }).waitFor();
    expect(await refundRow.getByRole('link', { name: 'Open in Temporal' }).getAttribute('href')).toBe(runUrl(`refund:${refundId}`));
    await expectAccessible(page, 'order page with Temporal links');
    await shot(page, 'admin-operations-order');

    // Checkout: its confirmation run.
    await page.goto(`${srv.url}/dashboard/#/checkouts/${checkoutId}/show`);
    const checkoutLink = page.getByRole('link', { name: 'Open in Temporal' });
    await checkoutLink.waitFor();
    expect(await checkoutLink.getAttribute('href')).toBe(runUrl(`checkout-confirm:${checkoutId}`));

    // Subscription: its lifecycle run.
    await page.goto(`${srv.url}/dashboard/#/subscriptions/${subscriptionId}/show`);
    const subscriptionLink = page.getByRole('link', { name: 'Open in Temporal' });
    await subscriptionLink.waitFor();
    expect(await subscriptionLink.getAttribute('href')).toBe(runUrl(`subscription:${subscriptionId}`));
    await expectAccessible(page, 'subscription page with Temporal link');

    // Webhook endpoint: its delivery retries; and "Refresh deliveries" shows a delivery that came later.
    const endpoint = await api('POST', '/v1/webhooks/endpoints', {
      organization_id: owner.organization.id,
      url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`,
      events: ['product.updated'],
    });
    expect(endpoint.status).toBe(201);
    endpointId = endpoint.body.id;
    await page.goto(`${srv.url}/dashboard/#/webhook-endpoints/${endpointId}/show`);
    await page.getByText('No deliveries yet', { exact: false }).waitFor();
    const retries = page.getByRole('link', { name: 'Open retries in Temporal' });
    await retries.waitFor();
    expect(await retries.getAttribute('href')).toBe(queryUrl(`WebhookEndpointId = "${endpointId}"`));

    const products = (await api('GET', `/v1/products/?organization_id=${owner.organization.id}`)).body.items as { id: string }[];
    expect((await api('PATCH', `/v1/products/${products[0]!.id}`, { name: 'Abo Plus 2' })).status).toBe(200);
    await until(async () => received.some((b) => b.includes('product.updated')));
    const deliveries = page.getByRole('table', { name: 'Deliveries' }).getByRole('row').filter({ hasText: 'product.updated' });
    // Clicks close together never cancel the read in flight: each one ends in a fresh read.
    await until(async () => {
      await page.getByRole('button', { name: 'Refresh deliveries' }).click();
      await page.getByRole('button', { name: 'Refresh deliveries' }).click();
      return deliveries.first().isVisible();
    });
    await deliveries.first().getByText('HTTP 200', { exact: true }).waitFor();
    await expectAccessible(page, 'webhook endpoint with Temporal link');
    await shot(page, 'admin-operations-webhook');
    await context.close();
  }, 180_000);

  it('shows a plain member of the organization no "Open in Temporal" link', async () => {
    const email = uniqueEmail('member');
    const signUp = await fetch(`${srv.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', name: 'Mia Member' }),
    });
    expect(signUp.status).toBe(200);
    const userId = ((await signUp.json()) as { user: { id: string } }).user.id;
    await addMember(srv.deps.orm.em.fork(), { userId, role: 'member', organizationId: owner.organization.id });

    const context = await newContext(browser, srv.url);
    const page = await signIn(context, email, 'correct horse battery');
    for (const [hash, ready] of [
      [`/orders/${orderId}/show`, page.getByRole('table', { name: 'Order lines' })],
      [`/subscriptions/${subscriptionId}/show`, page.getByText('EUR 19.00 / month')],
      [`/checkouts/${checkoutId}/show`, page.getByText('Checkout URL')],
      [`/webhook-endpoints/${endpointId}/show`, page.getByRole('button', { name: 'Refresh deliveries' })],
    ] as const) {
      // The page has read the member's role (the answer that decides) and rendered the record.
      const role = page.waitForResponse((r) => r.url().includes('/api/auth/organization/list-members'));
      await page.goto(`${srv.url}/dashboard/#${hash}`);
      await page.reload();
      expect((await role).status()).toBe(200);
      await ready.first().waitFor();
      await page.waitForFunction(() => !document.querySelector('[role="progressbar"]'));
      expect(await page.getByRole('link', { name: /in Temporal/ }).count(), hash).toBe(0);
    }
    await shot(page, 'admin-operations-member-webhook');
    // The same pages of the owner do show it (the check above looked at the right place).
    const ownerContext = await newContext(browser, srv.url);
    const ownerPage = await signIn(ownerContext, owner.email, owner.password);
    await ownerPage.goto(`${srv.url}/dashboard/#/subscriptions/${subscriptionId}/show`);
    await ownerPage.getByRole('link', { name: 'Open in Temporal' }).waitFor();
    await ownerContext.close();
    await context.close();
  }, 120_000);
});
