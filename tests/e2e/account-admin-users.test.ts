/**
 * The console's admin section in headless Chromium: an admin finds a user, bans and unbans them, then
 * impersonates them (the console runs as that user under an "Impersonating …" banner) and stops.
 * axe-core on the users page; screenshots .ci/out/screenshots/admin-users-*.png.
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
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
});

captureFailures('account-admin-users', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function seller(ctx: BrowserContext, name: string) {
  const email = uniqueEmail('admin-ui');
  const post = (path: string, data: unknown) => ctx.request.post(`${srv.url}/api/auth${path}`, { data, headers: { origin: srv.url } });
  const up = await post('/sign-up/email', { email, password: PASSWORD, name });
  expect(up.status()).toBe(200);
  const id = ((await up.json()) as { user: { id: string } }).user.id;
  const slug = `adm-${Math.random().toString(36).slice(2, 10)}`;
  expect((await post('/organization/create', { name: `${name} Shop`, slug })).status()).toBe(200);
  return { email, id };
}

describe('admin section', () => {
  it('bans, unbans and impersonates a user, with the banner and the way back', async () => {
    const admin = await seller(context, 'Ada Admin');
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: admin.id }, { role: 'admin' });
    const other = await newContext(browser, srv.url);
    const target = await seller(other, 'Tess Target');

    await page.goto(`${srv.url}/dashboard/#/admin/users`);
    await page.getByLabel('Search by email').fill(target.email);
    const row = page.getByRole('row').filter({ hasText: target.email });
    await row.getByRole('button', { name: `Ban ${target.email}` }).click();
    await row.getByText('Banned').waitFor();
    // The ban ended the target's session.
    expect(await (await other.request.get(`${srv.url}/api/auth/get-session?disableCookieCache=true`)).json()).toBeNull();
    await expectAccessible(page, 'admin users');
    await shot(page, 'admin-users-banned');
    await row.getByRole('button', { name: `Unban ${target.email}` }).click();
    await row.getByRole('button', { name: `Ban ${target.email}` }).waitFor();

    await row.getByRole('button', { name: `Impersonate ${target.email}` }).click();
    const banner = page.getByRole('alert').filter({ hasText: 'Impersonating Tess Target' });
    await banner.waitFor({ timeout: 30_000 });
    const as = (await (await context.request.get(`${srv.url}/api/auth/get-session?disableCookieCache=true`)).json()) as {
      user: { id: string };
      session: { impersonatedBy: string };
    };
    expect(as.user.id).toBe(target.id);
    expect(as.session.impersonatedBy).toBe(admin.id);
    await shot(page, 'admin-users-impersonating');

    await banner.getByRole('button', { name: 'Stop impersonating' }).click();
    await page.getByLabel('Search by email').waitFor({ timeout: 30_000 });
    const back = (await (await context.request.get(`${srv.url}/api/auth/get-session?disableCookieCache=true`)).json()) as { user: { id: string } };
    expect(back.user.id).toBe(admin.id);
    expect(await page.getByRole('alert').filter({ hasText: 'Impersonating' }).count()).toBe(0);
    await other.close();
  });

  it('pages through many users', async () => {
    const admin = await seller(context, 'Paula Pager');
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: admin.id }, { role: 'admin' });
    const tag = `pager${Math.random().toString(36).slice(2, 8)}`;
    const em = srv.deps.orm.em.fork();
    for (let i = 0; i < 55; i++) em.create(User, { email: `${tag}-${String(i).padStart(2, '0')}@example.com`, name: `User ${i}`, emailVerified: true, image: null });
    await em.flush();

    await page.goto(`${srv.url}/dashboard/#/admin/users`);
    await page.getByLabel('Search by email').fill(tag);
    await page.getByText('1–50 of 55').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: tag }).count()).toBe(50);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('51–55 of 55').waitFor();
    await expect.poll(() => page.getByRole('row').filter({ hasText: tag }).count()).toBe(5);
    expect(await page.getByRole('button', { name: 'Next page' }).isDisabled()).toBe(true);
    await shot(page, 'admin-users-page-2');
    await page.getByRole('button', { name: 'Previous page' }).click();
    await page.getByText('1–50 of 55').waitFor();
  });
});
