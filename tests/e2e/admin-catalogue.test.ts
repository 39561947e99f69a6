/**
 * The seller console's catalogue tools in headless Chromium against the real stack: tax rates; custom
 * fields of every type, one attached to a product as required; a meter with a name-and-metadata
 * filter summing a property, its quantities after events are ingested, and the events explorer's
 * filter; a product with a metered price (meter picker, cap); a file uploaded with visible progress
 * (multipart, presigned part URLs, on a throttled connection) and a downloadable benefit offering it;
 * percentage and fixed discounts restricted to a product, and their redemptions after a purchase;
 * license keys (the activations of a bought key, then revoking it). axe-core on every page; a phone
 * check. Screenshots: .ci/out/screenshots/admin-catalogue-*.png.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { apiCall, buy, captureFailures, choose, cookieHeader, expectAccessible, launch, newContext, openRow, reloadUntilVisible, shot, until } from './admin-helpers.ts';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let owner: Awaited<ReturnType<typeof seller>>;

const go = (hash: string) => page.goto(`${srv.url}/dashboard/#${hash}`);
/** Opens a menu entry and waits for the address to be its page (the old page may linger while the new one loads). */
const menu = async (name: string) => {
  const item = page.getByRole('menuitem', { name, exact: true });
  const href = (await item.getAttribute('href'))!;
  await item.click();
  await page.waitForURL((u) => u.hash === href.slice(href.indexOf('#')) || u.hash.startsWith(`${href.slice(href.indexOf('#'))}?`));
};
const notification = (text: string | RegExp) => page.getByRole('alert').filter({ hasText: text });
const api = async <T = any>(method: string, pathname: string, body?: unknown) =>
  apiCall<T>(srv.url, { cookie: await cookieHeader(context) }, method, pathname, body);
const save = () => page.getByRole('button', { name: 'Save' }).click();
/** The list's create link (its toolbar's, or the empty list's own while there is nothing yet). */
const create = (resource: string, name: string | RegExp = 'Create') =>
  page.getByRole('link', { name }).and(page.locator(`[href="#/${resource}/create"]`)).filter({ visible: true }).first().click();

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  owner = await seller(srv.url);
  await go('/login');
  await page.getByLabel(/^Email or username/).fill(owner.email);
  await page.getByLabel(/^Password/).fill(owner.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
}, 180_000);

captureFailures('admin-catalogue', () => page);

afterAll(async () => {
  for await (const run of srv.deps.temporal.workflow.list({ query: `TaskQueue = "${srv.deps.cfg.TEMPORAL_TASK_QUEUE}" AND ExecutionStatus = "Running"` })) {
    await srv.deps.temporal.workflow.getHandle(run.workflowId, run.runId).terminate('test finished').catch(() => {});
  }
  await browser?.close();
  await srv?.close();
}, 120_000);

describe('seller console: catalogue tools', () => {
  it('adds a tax rate and custom fields of every type, and attaches one to a product as required', async () => {
    await menu('Tax rates');
    await create('tax-rates', /^(Add tax rate|Create)$/);
    await page.getByLabel(/^Country/).fill('DE');
    await page.getByLabel(/^Rate \(%\)/).fill('19');
    await expectAccessible(page, 'tax rate create');
    await save();
    const rate = page.getByRole('row').filter({ hasText: '(DE)' });
    await rate.getByText('19%').waitFor();
    await expectAccessible(page, 'tax rates');
    await shot(page, 'admin-catalogue-tax-rates');

    for (const type of ['text', 'number', 'date', 'checkbox', 'select'] as const) {
      await menu('Custom fields');
      await create('custom-fields');
      // The form below follows the chosen type: make sure the choice took before filling it.
      await until(async () => {
        if ((await page.getByRole('combobox', { name: /^Type/ }).textContent()) === type) return true;
        await choose(page, /^Type/, type).catch(() => page.keyboard.press('Escape'));
        return false;
      });
      await page.getByLabel(/^Name/).fill(`Field ${type}`);
      await page.getByLabel(/^Slug/).fill(`field_${type}`);
      if (type === 'text') await page.getByLabel('Maximum length').fill('40');
      if (type === 'number') await page.getByLabel('At most').fill('500');
      if (type === 'select') {
        await page.getByRole('button', { name: 'Add' }).click();
        await page.getByLabel(/^Value/).fill('small');
        await page.getByLabel(/^Label/).last().fill('Small team');
        await expectAccessible(page, 'custom field create (select)');
      }
      await save();
      await page.getByRole('row').filter({ hasText: `field_${type}` }).getByText(type, { exact: true }).waitFor();
    }
    const fields = (await api('GET', `/v1/custom-fields/?organization_id=${owner.organization.id}&limit=20`)).body.items as { slug: string; type: string; properties: Record<string, unknown> }[];
    expect(fields.map((f) => f.type).sort()).toEqual(['checkbox', 'date', 'number', 'select', 'text']);
    expect(fields.find((f) => f.type === 'select')!.properties.options).toEqual([{ value: 'small', label: 'Small team' }]);
    expect(fields.find((f) => f.type === 'text')!.properties.max_length).toBe(40);
    await expectAccessible(page, 'custom fields');
    await shot(page, 'admin-catalogue-custom-fields');

    await menu('Products');
    await create('products');
    await page.getByLabel(/^Name/).fill('Team workshop');
    await page.getByLabel(/^Amount/).fill('30');
    const checkoutFields = page.locator('.ra-input-attached_custom_fields');
    await checkoutFields.getByRole('button', { name: 'Add' }).click();
    await choose(page, /^Custom field/, 'Field text', checkoutFields);
    await checkoutFields.getByLabel('Required').check();
    await save();
    await page.getByText('Field text (required)').waitFor();
    await expectAccessible(page, 'product with a required field');
  }, 180_000);

  it('creates a meter with a filter and a sum, shows its quantities and the events explorer, and prices a product by it', async () => {
    await menu('Meters');
    await create('meters');
    await page.getByLabel(/^Name/).fill('Tokens used');
    await page.locator('input[name="filter.clauses.0.value"]').fill('api.call');
    await page.locator('.ra-input-filter\\.clauses').getByRole('button', { name: 'Add' }).click();
    await page.locator('input[name="filter.clauses.1.property"]').fill('region');
    await page.locator('input[name="filter.clauses.1.value"]').fill('eu');
    await choose(page, /^Aggregation/, 'Sum of a property');
    await page.locator('input[name="aggregation.property"]').fill('tokens');
    await expectAccessible(page, 'meter create');
    await shot(page, 'admin-catalogue-meter-create');
    await save();
    await page.getByText('Total over the last 30 days: 0').waitFor();
    const meterId = page.url().split('/meters/')[1]!.split('/')[0]!;

    // A customer uses the API: 5 + 7 tokens in the EU (counted), 100 in the US (not counted).
    const customer = await api('POST', '/v1/customers/', { organization_id: owner.organization.id, email: uniqueEmail('user'), name: 'Ulla User' });
    expect(customer.status).toBe(201);
    const ingest = await api('POST', '/v1/events/ingest', {
      events: [
        { name: 'api.call', customer_id: customer.body.id, organization_id: owner.organization.id, metadata: { region: 'eu', tokens: 5 } },
        { name: 'api.call', customer_id: customer.body.id, organization_id: owner.organization.id, metadata: { region: 'eu', tokens: 7 } },
        { name: 'api.call', customer_id: customer.body.id, organization_id: owner.organization.id, metadata: { region: 'us', tokens: 100 } },
      ],
    });
    expect(ingest.status, JSON.stringify(ingest.body)).toBe(200);
    await reloadUntilVisible(page, page.getByText('Total over the last 30 days: 12'));
    await page.getByRole('img', { name: 'Quantities chart' }).waitFor();
    await choose(page, 'Customer', customer.body.email);
    await page.getByText('Total over the last 30 days: 12').waitFor();
    await page.getByRole('table', { name: 'Matching events' }).getByRole('row').filter({ hasText: '"tokens":7' }).waitFor();
    expect(await page.getByRole('table', { name: 'Matching events' }).getByRole('row').filter({ hasText: '"region":"us"' }).count()).toBe(0);
    await expectAccessible(page, 'meter page');
    await shot(page, 'admin-catalogue-meter');

    // The events explorer, filtered by name.
    await menu('Events');
    await page.getByLabel('Event name').fill('api.call');
    const calls = page.getByRole('row').filter({ hasText: 'api.call' });
    await until(async () => (await calls.count()) === 3);
    await calls.first().getByText('region, tokens').waitFor();
    await page.getByLabel('Event name').fill('nothing.like.this');
    await page.getByText(/No .*found/).waitFor();
    await expectAccessible(page, 'events');
    await shot(page, 'admin-catalogue-events');

    // A monthly product billed per token, capped.
    await menu('Products');
    await create('products');
    await page.getByLabel(/^Name/).fill('Token plan');
    await choose(page, /^Billing/, 'Monthly');
    await choose(page, /^Price type/, 'Metered, per unit');
    await choose(page, /^Meter/, 'Tokens used');
    await page.getByLabel(/^Price per unit/).fill('0.02');
    await page.getByLabel('Cap per period').fill('50');
    await expectAccessible(page, 'metered product create');
    await save();
    await page.getByText('USD 0.02 per unit of Tokens used, capped at USD 50.00').waitFor();
    const product = (await api('GET', `/v1/products/?organization_id=${owner.organization.id}&query=Token%20plan`)).body.items[0];
    expect(product.prices[0]).toMatchObject({ amount_type: 'metered_unit', meter_id: meterId, cap_amount: 5000 });
    await shot(page, 'admin-catalogue-metered-product');
  }, 180_000);

  it('uploads a file with visible progress and offers it in a downloadable benefit', async () => {
    await menu('Files');
    // A slow uplink, so the progress of the presigned multipart upload is on screen long enough to see.
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 20, downloadThroughput: -1, uploadThroughput: 400 * 1024 });
    const data = randomBytes(2 * 1024 * 1024);
    await page.locator('input[type=file]').setInputFiles({ name: 'handbook.pdf', mimeType: 'application/pdf', buffer: data });
    await page.getByRole('progressbar', { name: 'Upload progress' }).waitFor();
    await page.getByText(/Uploading… \d+%/).waitFor();
    await shot(page, 'admin-catalogue-file-uploading');
    await notification('handbook.pdf uploaded').waitFor({ timeout: 60_000 });
    await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });
    const row = page.getByRole('row').filter({ hasText: 'handbook.pdf' });
    await row.getByText('Yes', { exact: true }).waitFor();
    await row.getByText('2.0 MB').waitFor();
    await expectAccessible(page, 'files');
    await shot(page, 'admin-catalogue-files');

    await menu('Benefits');
    await create('benefits');
    await choose(page, /^Type/, 'File downloads');
    await page.getByLabel(/^Description/).fill('The handbook');
    await page.getByRole('combobox', { name: /^Files/ }).click();
    await page.getByRole('option', { name: 'handbook.pdf' }).click();
    await expectAccessible(page, 'downloadable benefit create');
    await save();
    await page.waitForURL(/#\/benefits\/[^/]+\/show/);
    await page.getByText('handbook.pdf').first().waitFor();
    const benefits = (await api('GET', `/v1/benefits/?organization_id=${owner.organization.id}&type=downloadables`)).body.items as { properties: { files: string[] } }[];
    expect(benefits).toHaveLength(1);
    const files = (await api('GET', `/v1/files/?organization_id=${owner.organization.id}`)).body.items as { id: string; name: string; size: number }[];
    expect(benefits[0]!.properties.files).toEqual([files.find((f) => f.name === 'handbook.pdf')!.id]);
    expect(files.find((f) => f.name === 'handbook.pdf')!.size).toBe(data.length);
  }, 180_000);

  it('creates percentage and fixed discounts for one product and shows their redemptions', async () => {
    const product = await api('POST', '/v1/products/', {
      organization_id: owner.organization.id,
      name: 'Course bundle',
      prices: [{ amount_type: 'fixed', price_amount: 8000, price_currency: 'usd' }],
    });
    expect(product.status).toBe(201);

    await menu('Discounts');
    await create('discounts');
    await page.getByLabel(/^Name/).fill('Launch week');
    await page.getByLabel('Code').fill('LAUNCH20');
    await page.getByLabel(/^Percent off/).fill('20');
    await page.getByLabel('Maximum redemptions').fill('5');
    await page.getByRole('combobox', { name: 'Only for these products' }).click();
    await page.getByRole('option', { name: 'Course bundle' }).click();
    await expectAccessible(page, 'discount create');
    await save();
    const launch = page.getByRole('row').filter({ hasText: 'LAUNCH20' });
    await launch.getByText('20% off once').waitFor();
    await launch.getByText('0 / 5').waitFor();

    await create('discounts');
    await page.getByLabel(/^Name/).fill('Ten off');
    await choose(page, /^Type/, 'Fixed amount');
    await page.getByLabel(/^Amount off/).fill('10');
    await choose(page, /^Duration/, 'Forever');
    await page.getByRole('combobox', { name: 'Only for these products' }).click();
    await page.getByRole('option', { name: 'Course bundle' }).click();
    await save();
    await page.getByRole('row').filter({ hasText: 'Ten off' }).getByText('USD 10.00 off forever').waitFor();
    const discounts = (await api('GET', `/v1/discounts/?organization_id=${owner.organization.id}`)).body.items as { name: string; products: { id: string }[] }[];
    expect(discounts.map((d) => [d.name, d.products.map((p) => p.id)]).sort()).toEqual([
      ['Launch week', [product.body.id]],
      ['Ten off', [product.body.id]],
    ]);

    // A buyer uses the code.
    const checkout = await api('POST', '/v1/checkouts/', { product_id: product.body.id });
    expect(checkout.status).toBe(201);
    await buy(srv.url, checkout.body.client_secret, { email: uniqueEmail('student'), name: 'Stu Dent' }, { discount_code: 'LAUNCH20' });
    await reloadUntilVisible(page, launch.getByText('1 / 5'));
    await expectAccessible(page, 'discounts');
    await shot(page, 'admin-catalogue-discounts');
    await page.getByRole('menuitem', { name: 'Orders' }).click();
    await page.getByRole('row').filter({ hasText: 'USD 64.00' }).first().waitFor();
  }, 180_000);

  it('lists a bought license key with its activations and revokes it', async () => {
    const benefit = await api('POST', '/v1/benefits/', {
      organization_id: owner.organization.id,
      type: 'license_keys',
      description: 'Desktop licence',
      properties: { prefix: 'DESK', activations: { limit: 2, enable_customer_admin: true } },
    });
    expect(benefit.status, JSON.stringify(benefit.body)).toBe(201);
    const product = await api('POST', '/v1/products/', {
      organization_id: owner.organization.id,
      name: 'Desktop app',
      prices: [{ amount_type: 'fixed', price_amount: 2500, price_currency: 'usd' }],
    });
    expect((await api('POST', `/v1/products/${product.body.id}/benefits`, { benefits: [benefit.body.id] })).status).toBe(200);
    const checkout = await api('POST', '/v1/checkouts/', { product_id: product.body.id });
    const buyer = uniqueEmail('desk');
    await buy(srv.url, checkout.body.client_secret, { email: buyer, name: 'Dee Sk' });
    const key = await until(async () => (await api('GET', `/v1/license-keys/?organization_id=${owner.organization.id}&benefit_id=${benefit.body.id}`)).body.items?.[0] as { id: string; key: string } | undefined);
    const activation = await apiCall(srv.url, {}, 'POST', '/v1/customer-portal/license-keys/activate', { key: key.key, organization_id: owner.organization.id, label: 'studio-mac' });
    expect(activation.status, JSON.stringify(activation.body)).toBe(200);

    await menu('License keys');
    const row = page.getByRole('row').filter({ hasText: buyer });
    await row.getByText('granted').waitFor();
    await expectAccessible(page, 'license keys');
    await openRow(page, row, /#\/license-keys\/[^/]+$/);
    await page.getByRole('table', { name: 'Activations' }).getByText('studio-mac').waitFor();
    await expectAccessible(page, 'license key page');
    await shot(page, 'admin-catalogue-license-key');
    await choose(page, /^Status/, 'Revoked');
    await save();
    await notification(/updated/i).waitFor();
    const after = await api('GET', `/v1/license-keys/${key.id}`);
    expect(after.body.status).toBe('revoked');
    // A revoked key no longer validates.
    const validate = await apiCall(srv.url, {}, 'POST', '/v1/customer-portal/license-keys/validate', { key: key.key, organization_id: owner.organization.id });
    expect([403, 404]).toContain(validate.status);
  }, 180_000);

  it('keeps the catalogue lists usable on a phone', async () => {
    const phone = await newContext(browser, srv.url, { width: 390, height: 844 });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    for (const [hash, text] of [
      ['/discounts', 'LAUNCH20'],
      ['/meters', 'Tokens used'],
      ['/files', 'handbook.pdf'],
      ['/tax-rates', '(DE)'],
    ] as const) {
      await p.goto(`${srv.url}/dashboard/#${hash}`);
      await p.getByText(text).first().waitFor();
      const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow, hash).toBeLessThanOrEqual(1);
    }
    await expectAccessible(p, 'tax rates on a phone');
    await shot(p, 'admin-catalogue-phone');
    await p.getByRole('button', { name: 'Open menu' }).click();
    await p.getByRole('menuitem', { name: 'Events' }).click();
    await p.getByText('api.call').first().waitFor();
    await phone.close();
  });
});
