/**
 * Social sign-in through the seller console in real Chromium against the local OpenID provider: the
 * sign-in page offers the configured provider, a new user comes back signed in, a cancelled sign-in
 * shows its error, and a seller links and unlinks the provider on the account page.
 * The browser reaches the server at PUBLIC_URL (`localhost` on a port of a plain forwarding proxy opened
 * before the server, so the provider's registered redirect URI is known up front).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { expectAccessible, launch, newContext, shot } from '../e2e/admin-helpers.ts';
import { oidcAccount } from './helpers.ts';
import { forwardingProxy, type ForwardingProxy } from './proxy.ts';
import { startOidcServer, type OidcServer } from './oidc-server.ts';

let srv: TestServer;
let op: OidcServer;
let browser: Browser;
let base: string;
let proxy: ForwardingProxy;

beforeAll(async () => {
  proxy = await forwardingProxy();
  base = `http://localhost:${proxy.port}`;
  op = await startOidcServer([`${base}/api/auth/callback/google`]);
  srv = await startTestServer({
    worker: false,
    env: {
      SERVE_UI: 'true',
      PUBLIC_URL: base,
      GOOGLE_CLIENT_ID: op.clientId,
      GOOGLE_CLIENT_SECRET: op.clientSecret,
      SOCIAL_PROVIDER_ENDPOINTS: JSON.stringify({ google: op.endpoints }),
    },
  });
  proxy.target = srv.url;
  browser = await launch();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
  await op?.close();
  await proxy?.close();
});

async function browserPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newContext(browser, base);
  return { context, page: await context.newPage() };
}

const sessionEmail = (page: Page) =>
  page.evaluate(async () => {
    const res = await fetch('/api/auth/get-session?disableCookieCache=true', { credentials: 'include' });
    const body = (await res.json()) as { user?: { email: string } } | null;
    return body?.user?.email ?? null;
  });

describe('social sign-in in the console', () => {
  it('offers the configured provider; a new user comes back signed in; a cancelled sign-in shows why', async () => {
    const { context, page } = await browserPage();
    await page.goto(`${base}/dashboard/#/login`);
    const google = page.getByRole('button', { name: 'Continue with Google' });
    await google.waitFor();
    expect(await page.getByRole('button', { name: /^Continue with/ }).allTextContents()).toEqual(['Continue with a passkey', 'Continue with Google']);
    await expectAccessible(page, 'sign-in with providers');
    await shot(page, 'sign-in-social-providers');

    op.nextLogin.account = null;
    await google.click();
    await page.getByRole('alert').filter({ hasText: 'access denied' }).waitFor();
    expect(await sessionEmail(page)).toBeNull();

    const who = oidcAccount({ name: 'Gina Google' });
    op.nextLogin.account = who;
    await page.getByRole('button', { name: 'Continue with Google' }).click();
    await page.getByRole('heading', { name: 'Create your organization' }).waitFor();
    expect(await sessionEmail(page)).toBe(who.email);
    await context.close();
  }, 90_000);

  it('links and unlinks the provider on the account page', async () => {
    const me = await seller(srv.url);
    const { context, page } = await browserPage();
    await page.goto(`${base}/dashboard/#/login`);
    await page.getByRole('heading', { name: 'Sign in to your seller console' }).waitFor({ timeout: 45_000 });
    await page.getByLabel(/^Email or username/).fill(me.email);
    await page.getByLabel(/^Password/).fill(me.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('combobox', { name: 'Organization' }).waitFor();

    await page.goto(`${base}/dashboard/#/account`);
    const methods = page.getByRole('region', { name: 'Sign-in methods' });
    await methods.getByText('Email and password').waitFor();
    expect(await methods.getByRole('button', { name: 'Unlink Email and password' }).isDisabled()).toBe(true);
    op.nextLogin.account = oidcAccount({ name: 'Linked Person' });
    await methods.getByRole('button', { name: 'Link Google', exact: true }).click();
    // Through the provider and back to the console's start page.
    await page.waitForURL((u) => u.origin === base && !u.hash.startsWith('#/account'));
    await page.getByRole('combobox', { name: 'Organization' }).waitFor();

    await page.goto(`${base}/dashboard/#/account`);
    await methods.getByRole('button', { name: 'Unlink Google' }).waitFor();
    await expectAccessible(page, 'account linked providers');
    await shot(page, 'account-linked-providers');
    const listed = await page.evaluate(async () => (await (await fetch('/api/auth/list-accounts')).json()) as { provider: string }[]);
    expect(listed.map((a) => a.provider).sort()).toEqual(['credential', 'google']);

    await methods.getByRole('button', { name: 'Unlink Google' }).click();
    await methods.getByRole('button', { name: 'Link Google', exact: true }).waitFor();
    const after = await page.evaluate(async () => (await (await fetch('/api/auth/list-accounts')).json()) as { provider: string }[]);
    // The whole rows in the message: a google row created after the unlink would be a second link, the
    // same row one the unlink did not delete.
    expect(after.map((a) => a.provider), JSON.stringify({ before: listed, after })).toEqual(['credential']);
    expect(await methods.getByRole('alert').count()).toBe(0);
    await context.close();
  }, 90_000);
});
