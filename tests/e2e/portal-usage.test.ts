/**
 * The portal's usage in Chromium against the real stack: a customer on a metered plan (fixed price +
 * "API calls" at 0.5 cent a unit, capped at $4.00, 20 % discount, 19 % tax) with known events and
 * meter credits signs in with the code mailed to them and reads, per meter, what they used this
 * period, their credits, the balance, the period and the estimated charge; the figures follow new
 * events; the subscriptions page shows the same section; a customer without a metered price sees
 * the empty state; a phone-width pass. axe-core on every page, a screenshot of each step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { startTestServer, waitForMail, type TestServer } from '../harness.ts';
import { credit, ingest, seedMetered, type MeteredSeed } from '../billing/helpers.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { expectAccessible, launchBrowser, newPage, PHONE, shop, shot, type Shop } from './portal-fixtures.ts';

const DAY = 86_400_000;
let srv: TestServer;
let browser: Browser;
let s: Shop;
let seed: MeteredSeed;
let email: string;
const startedAt = new Date(Date.now() - 5 * DAY);

beforeAll(async () => {
  [srv, browser] = await Promise.all([startTestServer({ env: { SERVE_UI: 'true' } }), launchBrowser()]);
  s = await shop(srv);
  seed = await seedMetered(srv, {
    orgId: s.organization.id,
    startedAt,
    fixedAmount: 1000,
    unitAmount: '0.5',
    capAmount: 400,
    discount: { basisPoints: 2000, months: 12 },
    tax: { country: 'DE', basisPoints: 1900 },
  });
  email = (await srv.deps.orm.em.fork().findOneOrFail(Customer, { id: seed.customerId })).email;
  await ingest(srv, seed, new Date(Date.now() - 4 * DAY), [300, 201]);
  await ingest(srv, seed, new Date(Date.now() - 6 * DAY), [10_000]); // before the period
  await credit(srv, seed, 100);
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

const nav = (page: Page, name: string) => page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name, exact: true }).click();
const day = (d: Date | string) => new Intl.DateTimeFormat('en-US', { dateStyle: 'medium' }).format(new Date(d));

/** The texts of the meter row's cells, in column order (used, credits, balance, period, estimated charge). */
async function cells(row: Locator): Promise<string[]> {
  return (await row.getByRole('cell').allTextContents()).map((t) => t.replace(/\s+/g, ' ').trim());
}

describe('customer portal: usage', () => {
  let context: BrowserContext;
  let page: Page;

  it('signs in and shows the period usage, credits, balance and estimated charge of the meter', async () => {
    ({ context, page } = await newPage(browser));
    await page.goto(`${srv.url}/portal/${s.organization.slug}`);
    await page.getByLabel('Email').fill(email);
    await page.getByRole('button', { name: 'Email me a sign-in code' }).click();
    await page.getByLabel('Sign-in code').waitFor();
    const mails = await waitForMail(email, 20_000, 'sign-in code');
    const code = /: ([A-Z2-9]{8})$/.exec(mails[mails.length - 1]!.subject)![1]!;
    await page.getByLabel('Sign-in code').fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Welcome back, Mia Metered' }).waitFor();
    await shot(page, 'portal-usage-1-overview');

    await nav(page, 'Usage');
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const table = page.getByRole('table', { name: 'Usage this billing period' });
    const row = table.getByRole('row', { name: /API calls/ });
    await row.waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toEqual([
      'Meter', 'Used this period', 'Credits', 'Balance', 'Period', 'Estimated charge',
    ]);
    const periodEnd = new Date(startedAt);
    periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1);
    // 501 used, 100 credited (all used), 401 to bill × $0.005 = $2.005 → $2.01; with the line's share of the
    // discount (−$0.40) and tax (+$0.31): $1.92.
    expect(await cells(row)).toEqual([
      '501',
      '100100 used this period',
      '-401',
      `${day(startedAt)} – ${day(periodEnd)}`,
      // The cell's parts joined: the charge, its arithmetic, with discount and tax, the charge date.
      `$2.01401 × $0.005, capped at $4.00$1.92 with discount and taxCharged on ${day(periodEnd)}`,
    ]);
    await expectAccessible(page, 'usage');
    await shot(page, 'portal-usage-2-usage');
  });

  it('follows new events up to the cap', async () => {
    await ingest(srv, seed, new Date(Date.now() - DAY), [1401]);
    await page.reload();
    const row = page.getByRole('table', { name: 'Usage this billing period' }).getByRole('row', { name: /API calls/ });
    await row.getByRole('cell', { name: '1,902', exact: true }).waitFor();
    const [used, , balance, , charge] = await cells(row);
    expect([used, balance]).toEqual(['1,902', '-1,802']);
    expect(charge).toMatch(/^\$4\.001,802 × \$0\.005, capped at \$4\.00/);
    await shot(page, 'portal-usage-3-capped');
  });

  it('shows the usage on the subscriptions page too', async () => {
    await nav(page, 'Subscriptions');
    const section = page.getByRole('region', { name: 'Usage this period' });
    await section.getByRole('row', { name: /API calls/ }).getByRole('cell', { name: '1,902', exact: true }).waitFor();
    await expectAccessible(page, 'subscriptions with usage');
    await shot(page, 'portal-usage-4-subscriptions');
    await context.close();
  });

  it('works at phone width (390×844), one stacked card per meter', async () => {
    ({ context, page } = await newPage(browser, PHONE));
    const session = await s.call('POST', '/v1/customer-sessions/', { customer_id: seed.customerId });
    expect(session.status).toBe(201);
    await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, srv.url));
    await page.getByRole('heading', { name: 'Welcome back, Mia Metered' }).waitFor();
    await nav(page, 'Usage');
    const row = page.getByRole('table', { name: 'Usage this billing period' }).getByRole('row', { name: /API calls/ });
    await row.getByText('1,902', { exact: true }).waitFor();
    expect((await cells(row)).slice(0, 3)).toEqual(['1,902', '100100 used this period', '-1,802']);
    // Each value carries its column's label on a phone (the header row is visually hidden).
    const labels = await row.getByRole('cell').evaluateAll((els) => els.map((el) => getComputedStyle(el, '::before').content));
    expect(labels).toEqual(['"Used this period"', '"Credits"', '"Balance"', '"Period"', '"Estimated charge"']);
    await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
    await expectAccessible(page, 'usage on a phone');
    await shot(page, 'portal-usage-5-phone');
    await context.close();
  });

  it('tells a customer without a usage-based price that there is nothing to show', async () => {
    const c = await s.created('POST', '/v1/customers/', { email: `no-usage-${Date.now()}@example.com`, name: 'Nora Flat' });
    const session = await s.call('POST', '/v1/customer-sessions/', { customer_id: c.id });
    ({ context, page } = await newPage(browser, PHONE));
    await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, srv.url));
    await page.getByRole('heading', { name: 'Welcome back, Nora Flat' }).waitFor();
    await nav(page, 'Usage');
    await page.getByText('None of your subscriptions has a usage-based price, so there is no usage to show.').waitFor();
    expect(await page.getByRole('table').count()).toBe(0);
    await expectAccessible(page, 'usage empty');
    await shot(page, 'portal-usage-6-empty');
    await context.close();
  });
});
