/**
 * Two-factor in the seller console, in headless Chromium on a phone-sized screen: a seller enrols an
 * authenticator app on the account page (setup key → code computed here with `otpauth` → backup codes
 * shown once), signs out, and signs in again through the second step with a fresh code.
 * axe-core on both pages; screenshots .ci/out/screenshots/account-2fa-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as OTPAuth from 'otpauth';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { captureFailures, expectAccessible, launch, newContext, shot } from './admin-helpers.ts';

const PASSWORD = 'correct horse battery';
const PHONE = { width: 390, height: 844 };

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const go = (hash: string) => page.goto(`${srv.url}/dashboard/#${hash}`);

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url, PHONE);
  page = await context.newPage();
  page.on('pageerror', (e) => console.error(`page error: ${e.message}`));
});

captureFailures('account-2fa', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('two-factor in the console', () => {
  it('enrols an authenticator app on the account page and signs in with it', async () => {
    const email = uniqueEmail('console-2fa');
    const post = (path: string, data: unknown) =>
      context.request.post(`${srv.url}/api/auth${path}`, { data, headers: { origin: srv.url } });
    expect((await post('/sign-up/email', { email, password: PASSWORD, name: 'Two Step' })).status()).toBe(200);
    const slug = `tf-${Date.now().toString(36)}`;
    expect((await post('/organization/create', { name: 'Two Step Shop', slug })).status()).toBe(200);

    // Enrol on the account page.
    await go('/account');
    const section = page.getByRole('region', { name: 'Two-factor authentication' });
    await section.getByText('Protect your account').waitFor();
    await section.getByLabel('Password').fill(PASSWORD);
    await section.getByRole('button', { name: 'Set up two-factor' }).click();
    const key = await section.getByLabel('Setup key').inputValue();
    expect(key).toMatch(/^[A-Z2-7]{32}$/);
    const totp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(key), digits: 6, period: 30 });

    // A wrong code first: refused, still not on.
    const right = totp.generate();
    await section.getByLabel('Code from the app').fill(right === '000000' ? '111111' : '000000');
    await section.getByRole('button', { name: 'Confirm and turn on' }).click();
    await section.getByRole('alert').filter({ hasText: 'That code is not right' }).waitFor();
    await section.getByLabel('Code from the app').fill(totp.generate());
    await section.getByRole('button', { name: 'Confirm and turn on' }).click();
    await section.getByText('Two-factor authentication is on.').waitFor();
    const codes = section.getByRole('list', { name: 'Backup codes' }).getByRole('listitem');
    await codes.first().waitFor();
    expect(await codes.allTextContents()).toHaveLength(10);
    for (const c of await codes.allTextContents()) expect(c).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/);
    await expectAccessible(page, 'account page');
    await shot(page, 'account-2fa-enrolled');
    await section.getByRole('button', { name: 'I have saved my backup codes' }).click();
    await section.getByRole('list', { name: 'Backup codes' }).waitFor({ state: 'detached' });
    await section.getByRole('button', { name: 'Turn off two-factor' }).waitFor();

    // Sign out, sign in again: the password is not enough.
    expect((await post('/sign-out', {})).status()).toBe(200);
    await go('/login');
    await page.getByLabel('Email or username').fill(email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const step = page.getByRole('form', { name: 'Second step' });
    await step.getByLabel('Code from your authenticator app').waitFor();
    const session = await context.request.get(`${srv.url}/api/auth/get-session`);
    expect(await session.json()).toBeNull();
    await expectAccessible(page, 'second step');
    await shot(page, 'account-2fa-second-step');

    // The next step's code (the current one was used to enrol, and a code is good once).
    await step.getByLabel('Code from your authenticator app').fill(totp.generate({ timestamp: Date.now() + 30_000 }));
    await step.getByRole('button', { name: 'Verify' }).click();
    await step.waitFor({ state: 'detached', timeout: 30_000 });
    await page.getByRole('heading', { name: 'Two Step Shop' }).or(page.getByText('Two Step Shop')).first().waitFor({ timeout: 30_000 });
    const after = (await (await context.request.get(`${srv.url}/api/auth/get-session?disableCookieCache=true`)).json()) as {
      user: { email: string; twoFactorEnabled: boolean };
    };
    expect(after.user).toMatchObject({ email, twoFactorEnabled: true });
    await shot(page, 'account-2fa-signed-in');
  });
});
