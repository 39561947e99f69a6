/**
 * A seller with 10,000 customers (written straight into this test's own database) opens Customers in
 * headless Chromium: the list says how many there are, pages through them on the server (next page,
 * last page), sorts by email both ways and its search finds one customer among them. Screenshots:
 * .ci/out/screenshots/admin-lists-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { captureFailures, expectAccessible, launch, newContext, shot } from './admin-helpers.ts';

const COUNT = 10_000;

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const email = (n: number) => `bulk-${String(n).padStart(5, '0')}@example.com`;

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' }, worker: false });
  const owner = await seller(srv.url);
  // Customer n was created n seconds ago: the newest first is 1, 2, 3, …
  await srv.deps.orm.em.getConnection().execute(
    `insert into customers (id, created_at, organization_id, email, email_verified, name, external_id, metadata)
     select gen_random_uuid(), now() - make_interval(secs => g), ?, 'bulk-' || lpad(g::text, 5, '0') || '@example.com', false,
            'Bulk Customer ' || g, 'ext-' || g, '{}'::jsonb
     from generate_series(1, ${COUNT}) g`,
    [owner.organization.id],
  );
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
  await page.goto(`${srv.url}/dashboard/#/login`);
  await page.getByLabel(/^Email or username/).fill(owner.email);
  await page.getByLabel(/^Password/).fill(owner.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
}, 180_000);

captureFailures('admin-lists', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

const rows = () => page.locator('tbody tr');
const firstEmail = () => rows().first().locator('td').first().textContent();
/** Waits until the list's first row is `e` (the range label changes before the new page's rows arrive). */
const firstIs = (e: string) => page.waitForFunction((x) => document.querySelector('tbody tr td')?.textContent === x, e);

describe('seller console: a list of 10,000 rows', () => {
  it('pages, sorts and searches 10,000 customers on the server', async () => {
    const started = Date.now();
    await page.getByRole('menuitem', { name: 'Customers' }).click();
    await page.getByText(/^1-10 of 10,?000$/).waitFor();
    const firstPageMs = Date.now() - started;
    expect(await rows().count()).toBe(10);
    await firstIs(email(1));
    expect(await firstEmail()).toBe(email(1));
    await expectAccessible(page, 'customers, 10,000');
    await shot(page, 'admin-lists-customers');

    await page.getByRole('button', { name: 'Go to next page' }).click();
    await page.getByText(/^11-20 of 10,?000$/).waitFor();
    await firstIs(email(11));
    expect(await firstEmail()).toBe(email(11));

    await page.getByRole('button', { name: 'Go to page 1000' }).click();
    await page.getByText(/^9,?991-10,?000 of 10,?000$/).waitFor();
    await firstIs(email(9991));
    expect(await firstEmail()).toBe(email(9991));
    await shot(page, 'admin-lists-last-page');

    // Sorted by email, both ways (the API's sorting, over all 10,000).
    await page.getByRole('button', { name: 'Go to page 1', exact: true }).click();
    await page.getByText(/^1-10 of 10,?000$/).waitFor();
    await page.locator('thead').getByText('Email', { exact: true }).click();
    await page.waitForURL(/sort=email/);
    await page.waitForFunction(() => document.querySelector('tbody tr td')?.textContent === 'bulk-00001@example.com' || document.querySelector('tbody tr td')?.textContent === 'bulk-10000@example.com');
    const firstSorted = await firstEmail();
    await page.locator('thead').getByText('Email', { exact: true }).click();
    const other = firstSorted === email(1) ? email(COUNT) : email(1);
    await page.waitForFunction((e) => document.querySelector('tbody tr td')?.textContent === e, other);
    expect([firstSorted, other].sort()).toEqual([email(1), email(COUNT)]);

    // Search finds one customer among 10,000.
    const searchStarted = Date.now();
    await page.getByPlaceholder('Search').fill('bulk-07777');
    await page.getByText(/^1-1 of 1$/).waitFor();
    const searchMs = Date.now() - searchStarted;
    expect(await rows().count()).toBe(1);
    await firstIs(email(7777));
    expect(await firstEmail()).toBe(email(7777));
    await shot(page, 'admin-lists-search');
    console.log(`customers list, ${COUNT} rows: first page shown after ${firstPageMs} ms, search answered after ${searchMs} ms (incl. debounce)`);
  }, 180_000);
});
