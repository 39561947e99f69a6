/**
 * Passkeys through the seller console in real Chromium with the DevTools WebAuthn virtual authenticator
 * (a platform authenticator with resident keys and user verification): a seller registers a named
 * passkey on the account page, renames it, signs out, signs back in with "Continue with a passkey",
 * removes it, and then the same authenticator no longer signs in. Plus the API's refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserContext, Page } from 'playwright-core';
import { Passkey } from '../../api/src/auth/passkeys/entities.ts';
import { User } from '../../api/src/auth/entities.ts';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { apiCall, expectAccessible, launch, newContext, shot } from '../e2e/admin-helpers.ts';
import type { Browser } from 'playwright-core';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** The console as the browser reaches it: `localhost`, the relying party of PUBLIC_URL. */
let base: string;
let me: Awaited<ReturnType<typeof seller>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { SERVE_UI: 'true', PUBLIC_URL: 'http://localhost:8000' } });
  base = srv.url.replace('127.0.0.1', 'localhost');
  me = await seller(srv.url);
  browser = await launch();
  context = await newContext(browser, base);
  page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

async function passkeysOfSeller() {
  const em = srv.deps.orm.em.fork();
  const user = await em.findOneOrFail(User, { email: me.email });
  return em.find(Passkey, { user }, { orderBy: { createdAt: 'asc' } });
}

async function signInWithPassword() {
  await page.goto(`${base}/dashboard/#/login`);
  await page.getByLabel(/^Email or username/).fill(me.email);
  await page.getByLabel(/^Password/).fill(me.password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('combobox', { name: 'Organization' }).waitFor();
}

async function sessionEmail(): Promise<string | null> {
  return page.evaluate(async () => {
    const res = await fetch('/api/auth/get-session?disableCookieCache=true', { credentials: 'include' });
    const body = (await res.json()) as { user?: { email: string } } | null;
    return body?.user?.email ?? null;
  });
}

describe('passkeys in the console', () => {
  it('registers, renames, signs in with, and removes a passkey', async () => {
    await signInWithPassword();
    await page.goto(`${base}/dashboard/#/account`);
    const section = page.getByRole('region', { name: 'Passkeys' });
    await section.getByText('No passkeys yet.').waitFor();
    await section.getByLabel('Passkey name').fill('Test laptop');
    await section.getByRole('button', { name: 'Add a passkey' }).click();
    await section.getByText('Passkey added.').waitFor();
    await section.getByRole('cell', { name: 'Test laptop', exact: true }).waitFor();
    const stored = await passkeysOfSeller();
    expect(stored.map((p) => p.name)).toEqual(['Test laptop']);
    expect(stored[0]!.deviceType).toMatch(/^(singleDevice|multiDevice)$/);
    await expectAccessible(page, 'account passkeys');
    await shot(page, 'account-passkeys');

    await section.getByRole('button', { name: 'Rename passkey Test laptop' }).click();
    await section.getByLabel('New name').fill('Work laptop');
    await section.getByRole('button', { name: 'Save' }).click();
    await section.getByRole('cell', { name: 'Work laptop', exact: true }).waitFor();
    expect((await passkeysOfSeller()).map((p) => p.name)).toEqual(['Work laptop']);

    // Signed out (the cookies gone), the passkey signs the seller back in.
    await context.clearCookies();
    await page.goto(`${base}/dashboard/#/login`);
    await page.getByRole('heading', { name: 'Sign in to your seller console' }).waitFor();
    expect(await sessionEmail()).toBeNull();
    await expectAccessible(page, 'sign-in with passkey button');
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await page.getByRole('combobox', { name: 'Organization' }).waitFor();
    expect(await sessionEmail()).toBe(me.email);

    // Removed, the same authenticator no longer signs in.
    await page.goto(`${base}/dashboard/#/account`);
    await section.getByRole('button', { name: 'Remove passkey Work laptop' }).click();
    await section.getByText('No passkeys yet.').waitFor();
    expect(await passkeysOfSeller()).toEqual([]);
    await context.clearCookies();
    await page.goto(`${base}/dashboard/#/login`);
    await page.getByRole('button', { name: 'Continue with a passkey' }).click();
    await page.getByRole('alert').filter({ hasText: 'Passkey not found' }).waitFor();
    expect(await sessionEmail()).toBeNull();
  }, 120_000);

  it('shows the account sections at phone width', async () => {
    await signInWithPassword();
    const phone = await newContext(browser, base, { width: 390, height: 844 });
    await phone.addCookies(await context.cookies());
    const p = await phone.newPage();
    await p.goto(`${base}/dashboard/#/account`);
    await p.getByRole('region', { name: 'Passkeys' }).getByRole('button', { name: 'Add a passkey' }).waitFor();
    await p.getByRole('region', { name: 'Sign-in methods' }).getByText('Email and password').waitFor();
    await expectAccessible(p, 'account passkeys phone');
    await shot(p, 'account-passkeys-phone');
    await phone.close();
  }, 60_000);
});

describe('passkey API refusals', () => {
  it('refuses verification without this browser\'s challenge, and another user\'s passkey is not found', async () => {
    const cookie = me.cookie;
    const noChallenge = await apiCall(srv.url, { cookie }, 'POST', '/api/auth/passkey/verify-authentication', { response: { id: 'x' } });
    expect(noChallenge.status).toBe(400);
    expect(noChallenge.body).toMatchObject({ message: 'Challenge not found' });

    const em = srv.deps.orm.em.fork();
    const owner = await em.findOneOrFail(User, { email: me.email });
    const theirs = em.create(Passkey, {
      user: owner,
      name: 'theirs',
      publicKey: 'AAAA',
      credentialId: `cred-${Date.now()}`,
      counter: 0,
      deviceType: 'singleDevice',
      backedUp: false,
      transports: null,
      aaguid: null,
    });
    await em.flush();
    const other = await seller(srv.url);
    const del = await apiCall(srv.url, { cookie: other.cookie }, 'POST', '/api/auth/passkey/delete-passkey', { id: theirs.id });
    expect(del.status).toBe(404);
    const rename = await apiCall(srv.url, { cookie: other.cookie }, 'POST', '/api/auth/passkey/update-passkey', { id: theirs.id, name: 'mine now' });
    expect(rename.status).toBe(404);
    const list = await apiCall<{ name: string }[]>(srv.url, { cookie: other.cookie }, 'GET', '/api/auth/passkey/list-user-passkeys');
    expect(list.body).toEqual([]);
    expect((await passkeysOfSeller()).map((p) => p.name)).toContain('theirs');
  });
});
