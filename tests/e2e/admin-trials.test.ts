/**
 * Free trials in the seller console, in headless Chromium against the real stack: a recurring
 * product created with a 2-week trial (shown on its page and in the product list), changed to 14
 * days and then removed on edit; a checkout link giving its own 7-day trial (shown on its page and in
 * the list) and refused on a one-time product with the API's message at the field; the product form
 * and page on a phone. Every step checks what the API stored. axe-core on every page; screenshots:
 * .ci/out/screenshots/admin-trials-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { apiCall, captureFailures, choose, cookieHeader, expectAccessible, launch, newContext, shot } from './admin-helpers.ts';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: Awaited<ReturnType<typeof seller>>;

const go = (p: Page, hash: string) => p.goto(`${srv.url}/dashboard/#${hash}`);
const menu = async (name: string) => {
  const item = page.getByRole('menuitem', { name, exact: true });
  const href = (await item.getAttribute('href'))!;
  await item.click();
  await page.waitForURL((u) => u.hash === href.slice(href.indexOf('#')) || u.hash.startsWith(`${href.slice(href.indexOf('#'))}?`));
};
const api = async <T = any>(method: string, pathname: string, body?: unknown) =>
  apiCall<T>(srv.url, { cookie: await cookieHeader(context) }, method, pathname, body);
const save = (p: Page = page) => p.getByRole('button', { name: 'Save' }).click();
const create = (resource: string) =>
  page.getByRole('link', { name: 'Create' }).and(page.locator(`[href="#/${resource}/create"]`)).filter({ visible: true }).first().click();
/** The value shown under a label on a show page. */
const shown = (p: Page, label: string) => p.locator('.RaLabeled-label').filter({ hasText: new RegExp(`^${label}$`) }).locator('xpath=..');
const productNamed = async (name: string) =>
  (await api('GET', `/v1/products/?organization_id=${owner.organization.id}&query=${encodeURIComponent(name)}`)).body.items[0];

beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  owner = await seller(srv.url);
  await go(page, '/login');
  await page.getByLabel(/^Email or username/).fill(owner.email);
  await page.getByLabel(/^Password/).fill(owner.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
}, 180_000);

captureFailures('admin-trials', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
}, 120_000);

describe('seller console: free trials', () => {
  it('creates a recurring product with a 2-week trial, changes it to 14 days, then removes it', async () => {
    await menu('Products');
    await create('products');
    await page.getByLabel(/^Name/).fill('Trial plan');
    // A one-time product offers no trial.
    expect(await page.getByRole('combobox', { name: /^Free trial/ }).count()).toBe(0);
    await choose(page, /^Billing/, 'Monthly');
    await choose(page, /^Free trial/, 'Weeks');
    await page.getByLabel(/^Trial length/).fill('2');
    await page.getByLabel(/^Amount/).fill('19');
    await expectAccessible(page, 'product create with a trial');
    await shot(page, 'admin-trials-product-create');
    await save();
    await shown(page, 'Free trial').getByText('2 weeks').waitFor();
    const created = await productNamed('Trial plan');
    expect([created.recurring_interval, created.trial_interval, created.trial_interval_count]).toEqual(['month', 'week', 2]);
    await expectAccessible(page, 'product page with a trial');
    await shot(page, 'admin-trials-product-show');

    await page.getByRole('link', { name: 'Edit' }).click();
    expect(await page.getByRole('combobox', { name: /^Free trial/ }).textContent()).toBe('Weeks');
    await choose(page, /^Free trial/, 'Days');
    await page.getByLabel(/^Trial length/).fill('14');
    await save();
    await shown(page, 'Free trial').getByText('14 days').waitFor();
    expect(((await productNamed('Trial plan')) as { trial_interval: string; trial_interval_count: number }).trial_interval_count).toBe(14);

    await menu('Products');
    const row = page.getByRole('row').filter({ hasText: 'Trial plan' });
    await row.getByRole('cell', { name: '14 days' }).waitFor();
    expect(await page.getByRole('columnheader', { name: 'Trial' }).count()).toBe(1);
    await expectAccessible(page, 'product list with a trial');
    await shot(page, 'admin-trials-product-list');

    await row.click();
    await page.getByRole('link', { name: 'Edit' }).click();
    await choose(page, /^Free trial/, 'No trial');
    expect(await page.getByLabel(/^Trial length/).count()).toBe(0);
    await save();
    await shown(page, 'Free trial').getByText('No trial').waitFor();
    const cleared = await productNamed('Trial plan');
    expect([cleared.trial_interval, cleared.trial_interval_count]).toEqual([null, null]);
  }, 180_000);

  it("gives a checkout link its own 7-day trial, and shows the API's refusal on a one-time product", async () => {
    const plan = await api('POST', '/v1/products/', {
      name: 'Link plan',
      recurring_interval: 'month',
      prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }],
      organization_id: owner.organization.id,
    });
    expect(plan.status).toBe(201);
    const oneTime = await api('POST', '/v1/products/', {
      name: 'Ebook',
      prices: [{ amount_type: 'fixed', price_amount: 500, price_currency: 'usd' }],
      organization_id: owner.organization.id,
    });
    expect(oneTime.status).toBe(201);

    await menu('Checkout links');
    await create('checkout-links');
    await page.getByRole('combobox', { name: /^Products/ }).click();
    await page.getByRole('option', { name: 'Link plan' }).click();
    await page.getByLabel(/^Label/).fill('Week of trials');
    await choose(page, /^Free trial/, 'Days');
    await page.getByLabel(/^Trial length/).fill('7');
    await expectAccessible(page, 'checkout link create with a trial');
    await shot(page, 'admin-trials-link-create');
    await save();
    await shown(page, 'Free trial').getByText('7 days').waitFor();
    const links = (await api('GET', `/v1/checkout-links/?organization_id=${owner.organization.id}`)).body.items;
    expect(links.map((l: any) => [l.label, l.trial_interval, l.trial_interval_count])).toEqual([['Week of trials', 'day', 7]]);
    await expectAccessible(page, 'checkout link page with a trial');
    await shot(page, 'admin-trials-link-show');

    await menu('Checkout links');
    await page.getByRole('row').filter({ hasText: 'Week of trials' }).getByRole('cell', { name: '7 days' }).waitFor();

    await create('checkout-links');
    await page.getByRole('combobox', { name: /^Products/ }).click();
    await page.getByRole('option', { name: 'Ebook' }).click();
    await choose(page, /^Free trial/, 'Weeks');
    await page.getByLabel(/^Trial length/).fill('1');
    await save();
    await page.getByText('Trials are only available for recurring products.').first().waitFor();
    await shot(page, 'admin-trials-link-refused');
    expect((await api('GET', `/v1/checkout-links/?organization_id=${owner.organization.id}`)).body.items).toHaveLength(1);
  }, 180_000);

  it('sets and shows a trial on a phone', async () => {
    const phone = await newContext(browser, srv.url, { width: 390, height: 844 });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    await go(p, '/products/create');
    await p.getByLabel(/^Name/).fill('Phone plan');
    await choose(p, /^Billing/, 'Yearly');
    await choose(p, /^Free trial/, 'Months');
    await p.getByLabel(/^Trial length/).fill('1');
    await p.getByLabel(/^Amount/).fill('99');
    const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await expectAccessible(p, 'product create with a trial on a phone');
    await save(p);
    await shown(p, 'Free trial').getByText('1 month').waitFor();
    await expectAccessible(p, 'product page with a trial on a phone');
    await shot(p, 'admin-trials-phone');
    const stored = await productNamed('Phone plan');
    expect([stored.recurring_interval, stored.trial_interval, stored.trial_interval_count]).toEqual(['year', 'month', 1]);
    await phone.close();
  }, 180_000);
});
