/**
 * The console's admin users page on a phone (390 px wide) in headless Chromium: the users are rows a
 * screen reader (and a role query) reaches, each with its Ban and Impersonate buttons, without the
 * page scrolling sideways; banning, impersonating and coming back work from the phone. axe-core; screenshots
 * .ci/out/screenshots/admin-users-phone*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { User } from '../../api/src/auth/entities.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { captureFailures, expectAccessible, launch, newContext, shot } from './admin-helpers.ts';

const PASSWORD = 'correct horse battery';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url, { width: 390, height: 844 });
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
}, 120_000);

captureFailures('admin-users-phone', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function signUp(ctx: BrowserContext, name: string) {
  const email = uniqueEmail('phone-admin');
  const post = (path: string, data: unknown) => ctx.request.post(`${srv.url}/api/auth${path}`, { data, headers: { origin: srv.url } });
  const up = await post('/sign-up/email', { email, password: PASSWORD, name });
  expect(up.status()).toBe(200);
  const id = ((await up.json()) as { user: { id: string } }).user.id;
  expect((await post('/organization/create', { name: `${name} Shop`, slug: `ph-${Math.random().toString(36).slice(2, 10)}` })).status()).toBe(200);
  return { email, id };
}

describe('admin users page on a phone', () => {
  it('shows each user as a row reachable by role, with its actions, and bans from there', async () => {
    const admin = await signUp(context, 'Pia Phone');
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: admin.id }, { role: 'admin' });
    const other = await newContext(browser, srv.url);
    const target = await signUp(other, 'Tom Target');

    // As a person on a phone gets there: the user menu's "Users (admin)".
    await page.goto(`${srv.url}/dashboard/#/`);
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
    await page.getByRole('banner').getByRole('button', { name: /^(Pia Phone|Profile)$/ }).click();
    await page.getByRole('menuitem', { name: 'Users (admin)' }).click();
    await page.getByLabel('Search by email').fill(target.email);
    const table = page.getByRole('table', { name: 'Users' });
    const row = table.getByRole('row').filter({ hasText: target.email });
    await row.waitFor();
    expect(await table.getByRole('row').filter({ hasText: target.email }).count()).toBe(1);
    expect(await row.getByRole('cell').allInnerTexts()).toEqual(expect.arrayContaining(['Tom Target', 'user']));
    await row.getByRole('button', { name: `Impersonate ${target.email}` }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(1);
    await expectAccessible(page, 'admin users on a phone');
    await shot(page, 'admin-users-phone');

    await row.getByRole('button', { name: `Ban ${target.email}` }).click();
    await row.getByText('Banned').waitFor();
    await row.getByRole('button', { name: `Unban ${target.email}` }).waitFor();
    await shot(page, 'admin-users-phone-banned');
    await row.getByRole('button', { name: `Unban ${target.email}` }).click();
    await row.getByRole('button', { name: `Ban ${target.email}` }).waitFor();

    // Impersonating and coming back lands on the users page again, its rows still reachable.
    await row.getByRole('button', { name: `Impersonate ${target.email}` }).click();
    const banner = page.getByRole('alert').filter({ hasText: 'Impersonating Tom Target' });
    await banner.waitFor({ timeout: 30_000 });
    await banner.getByRole('button', { name: 'Stop impersonating' }).click();
    await page.getByLabel('Search by email').waitFor({ timeout: 30_000 });
    await page.getByLabel('Search by email').fill(target.email);
    await page.getByRole('table', { name: 'Users' }).getByRole('row').filter({ hasText: target.email }).getByRole('button', { name: `Impersonate ${target.email}` }).waitFor();
    await other.close();
  }, 120_000);
});
