/**
 * The OAuth2 pages of the seller console in headless Chromium: a seller registers an application
 * on "OAuth applications" (the secret shown once), a third-party app built with `openid-client`
 * sends the browser to the consent page from the discovery document, the seller signs in there,
 * reads the scopes in words and clicks Approve; the app exchanges the code and calls /v1. On a
 * phone-width screen the seller approves an organization subject by picking the organization.
 * "Authorized apps" lists both and revokes one. Screenshots: .ci/out/screenshots/oauth2-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as oidc from 'openid-client';
import { seller, type TestServer } from '../harness.ts';
import { expectAccessible, launch, newContext, shot } from '../e2e/admin-helpers.ts';
import { callbackServer, onServer, relyingParty, startOAuthServer } from './helpers.ts';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let app: Awaited<ReturnType<typeof callbackServer>>;

beforeAll(async () => {
  srv = await startOAuthServer({ SERVE_UI: 'true' });
  app = await callbackServer();
  browser = await launch();
  context = await newContext(browser, srv.url);
  page = await context.newPage();
});
afterAll(async () => {
  await browser?.close();
  await app?.close();
  await srv?.close();
});

async function startAuthorization(config: oidc.Configuration, scope: string, extra: Record<string, string> = {}) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: app.url,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  return { url, verifier, state, nonce };
}

describe('console: OAuth applications, consent, authorized apps', () => {
  it('registers an app, approves it on the consent page after signing in, and revokes it from Authorized apps', async () => {
    const s = await seller(srv.url);

    // Sign in, then register the application on its page.
    await page.goto(`${srv.url}/dashboard/#/login`);
    await page.getByLabel(/^Email or username/).fill(s.email);
    await page.getByLabel(/^Password/).fill(s.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
    await page.getByRole('menuitem', { name: 'OAuth applications' }).click();
    await page.getByText('No applications yet.').waitFor();
    await page.getByRole('button', { name: 'Register application' }).click();
    const dialog = page.getByRole('dialog', { name: 'Register an OAuth application' });
    await dialog.getByLabel(/^Application name/).fill('Example app');
    await dialog.getByLabel(/^Homepage URL/).fill('https://example.com');
    await dialog.getByLabel(/^Redirect URIs/).fill(app.url);
    await dialog.getByLabel(/^Scopes/).fill('openid profile email products:read products:write');
    await expectAccessible(page, 'register OAuth application');
    await dialog.getByRole('button', { name: 'Register' }).click();
    const done = page.getByRole('dialog', { name: 'Application registered' });
    const clientId = (await done.getByLabel('Client ID').textContent())!.trim();
    const clientSecret = (await done.getByLabel('Client secret').textContent())!.trim();
    expect(clientId).toMatch(/^polar_ci_/);
    expect(clientSecret).toMatch(/^polar_cs_/);
    await done.getByText('Copy the client secret now: it is shown only once.').waitFor();
    await shot(page, 'oauth2-application-registered');
    await done.getByRole('button', { name: 'Done' }).click();
    await page.getByRole('cell', { name: clientId }).waitFor();
    await expectAccessible(page, 'OAuth applications');
    await shot(page, 'oauth2-applications');

    // Signed out, the third-party app sends the browser to the discovered authorization endpoint.
    await context.clearCookies();
    const config = await relyingParty(srv, { client_id: clientId, client_secret: clientSecret, redirect_uris: [app.url], token_endpoint_auth_method: 'client_secret_post', scope: '' });
    const auth = await startAuthorization(config, 'openid email products:read');
    await page.goto(onServer(srv, auth.url.href));
    // The consent page asks to sign in first, then comes back.
    await page.getByLabel(/^Email or username/).fill(s.email);
    await page.getByLabel(/^Password/).fill(s.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Authorize Example app' }).waitFor();
    await page.getByText(`Example app wants to act for you (${s.email}).`).waitFor();
    const scopes = page.getByRole('list', { name: 'It will be able to' });
    await expect.poll(async () => (await scopes.getByRole('listitem').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ')), { timeout: 20_000 }).toEqual([
      'Know who you are openid',
      'See your email address email',
      'Read products products:read',
    ]);
    await expectAccessible(page, 'consent page');
    await shot(page, 'oauth2-consent');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((u) => u.href.startsWith(app.url));
    await page.getByRole('heading', { name: 'Signed in to Example app' }).waitFor();

    const tokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), {
      pkceCodeVerifier: auth.verifier,
      expectedState: auth.state,
      expectedNonce: auth.nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()!.email).toBe(s.email);
    const products = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(products.status).toBe(200);

    // On a phone: the app asks to act for an organization; the seller picks theirs and approves.
    await page.setViewportSize({ width: 390, height: 844 });
    const orgAuth = await startAuthorization(config, 'products:read products:write', { sub_type: 'organization' });
    await page.goto(onServer(srv, orgAuth.url.href));
    await page.getByText('Example app wants to act for one of your organizations.').waitFor();
    await page.getByRole('radiogroup', { name: 'Organization' }).getByLabel(s.organization.slug).check();
    await expectAccessible(page, 'consent page, organization, phone');
    await shot(page, 'oauth2-consent-organization-phone');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.waitForURL((u) => u.href.startsWith(app.url));
    const orgTokens = await oidc.authorizationCodeGrant(config, new URL(page.url()), { pkceCodeVerifier: orgAuth.verifier, expectedState: orgAuth.state });
    expect(orgTokens.access_token).toMatch(/^polar_at_o_/);

    // Deny sends the app access_denied.
    const denied = await startAuthorization(config, 'products:read');
    await page.goto(onServer(srv, denied.url.href));
    await page.getByRole('button', { name: 'Deny' }).click();
    await page.waitForURL((u) => u.href.startsWith(app.url));
    expect(new URL(page.url()).searchParams.get('error')).toBe('access_denied');

    // Authorized apps: both approvals, each revocable.
    await page.setViewportSize({ width: 1366, height: 900 });
    await page.goto(`${srv.url}/dashboard/#/oauth2/authorized`);
    const entries = page.getByRole('region', { name: 'Example app' });
    await expect.poll(() => entries.count(), { timeout: 20_000 }).toBe(2);
    await expectAccessible(page, 'authorized apps');
    await shot(page, 'oauth2-authorized-apps');
    const userEntry = entries.filter({ hasText: 'Acts for you' });
    await userEntry.getByRole('button', { name: 'Revoke access' }).click();
    await expect.poll(() => entries.count(), { timeout: 20_000 }).toBe(1);
    await expect.poll(async () => (await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status, { timeout: 20_000 }).toBe(401);
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${orgTokens.access_token}` } })).status).toBe(200);
  });
});
