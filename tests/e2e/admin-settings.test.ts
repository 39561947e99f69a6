/**
 * The seller console's entry and settings in headless Chromium against the real stack and mail
 * catcher: a seller who forgot their password resets it from the mailed link and signs in; verifies
 * their address from the mailed link; sees an API validation error next to the field it names;
 * creates a second organization and switches between them (lists follow the selection); manages
 * the organization profile, invitations (send, resend, cancel) and teams. Screenshots:
 * .ci/out/screenshots/admin-settings-*.png.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { linkIn, onServer, waitForMailMatching } from '../auth/helpers.ts';
import { apiCall, captureFailures, choose, cookieHeader, expectAccessible, launch, newContext, shot } from './admin-helpers.ts';

let srv: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;

const go = (hash: string) => page.goto(`${srv.url}/dashboard/#${hash}`);
const notification = (text: string | RegExp) => page.getByRole('alert').filter({ hasText: text });

beforeAll(async () => {
  srv = await startTestServer({ env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await launch();
  context = await newContext(browser, srv.url);
  // Mail links (opened on this server) redirect to PUBLIC_URL: keep the browser on this test server.
  // The auth service's answer is fetched with the browser's cookies and replayed with its cookies.
  await context.route(`${srv.url}/api/auth/**`, async (route) => {
    if (route.request().method() !== 'GET' || !route.request().isNavigationRequest()) return route.continue();
    const response = await route.fetch({ maxRedirects: 0 });
    const headers = response.headers();
    if (headers.location) {
      const u = new URL(headers.location, srv.url);
      headers.location = `${srv.url}${u.pathname}${u.search}${u.hash}`;
    }
    return route.fulfill({ response, headers });
  });
  page = await context.newPage();
});

captureFailures('admin-settings', () => page);

afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('seller console: entry and settings', () => {
  it('resets a forgotten password from the mail, verifies the address, shows field errors, switches organizations and manages settings', async () => {
    const s = await seller(srv.url);

    // Forgotten password → mail → reset page → sign in with the new password.
    await go('/login');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    // Until the page has changed, /^Email/ would also match the sign-in page's "Email or username".
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await page.getByLabel(/^Email/).fill(s.email);
    await expectAccessible(page, 'forgotten password');
    await page.getByRole('button', { name: 'Send reset link' }).click();
    await page.getByText(`If an account exists for ${s.email}, a link to reset its password is on its way.`).waitFor();
    const resetMail = await waitForMailMatching(s.email, /Reset your password/);
    await page.goto(onServer(srv.url, linkIn(resetMail, '/reset-password/')));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await page.getByLabel(/^New password/).fill('a brand new passphrase');
    await page.getByLabel(/^Repeat the new password/).fill('a brand new passphrase');
    await expectAccessible(page, 'reset password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Your password was changed. Sign in with the new one.').waitFor();
    await page.getByLabel(/^Email or username/).fill(s.email);
    await page.getByLabel(/^Password/).fill('a brand new passphrase');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();

    // Email verification from the banner's mail.
    await page.getByRole('button', { name: 'Send the link again' }).click();
    await page.getByText(`A verification link is on its way to ${s.email}.`).waitFor();
    const verifyMail = await waitForMailMatching(s.email, /Verify your email address/);
    await page.goto(onServer(srv.url, linkIn(verifyMail, '/verify-email')));
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
    await page.getByRole('menuitem', { name: 'Products' }).click();
    await page.getByText('No Products found').waitFor();
    expect(await page.getByText(/Please verify your email address/).count()).toBe(0);

    // An API validation error lands next to the field it names.
    await page.getByRole('link', { name: 'Create' }).first().click();
    await page.getByLabel(/^Name/).fill('Tiny thing');
    await page.getByLabel(/^Amount/).fill('0.1');
    await page.getByRole('button', { name: 'Save' }).click();
    await notification(/prices › 0 › price amount/).waitFor();
    expect(await page.getByLabel(/^Amount/).getAttribute('aria-invalid')).toBe('true');
    await shot(page, 'admin-settings-field-error');
    await page.getByLabel(/^Amount/).fill('5');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('USD 5.00').waitFor();

    // A second organization; lists follow the selected one.
    const second = `Second shop ${Date.now().toString(36)}`;
    await choose(page, 'Organization', '+ New organization');
    await page.getByRole('heading', { name: 'Create another organization' }).waitFor();
    await page.getByLabel(/^Organization name/).fill(second);
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.getByRole('heading', { name: 'Revenue', exact: true, level: 2 }).waitFor();
    expect(await page.getByRole('combobox', { name: 'Organization' }).textContent()).toBe(second);
    await page.getByRole('menuitem', { name: 'Products' }).click();
    await page.getByText('No Products found').waitFor();
    await choose(page, 'Organization', s.organization.name);
    await page.getByRole('menuitem', { name: 'Products' }).click();
    await page.getByText('Tiny thing').waitFor();

    // Settings: profile.
    await page.getByRole('menuitem', { name: 'Settings' }).click();
    await page.getByLabel('Website').fill('https://shop.example.com');
    expect(await page.getByLabel('Slug').inputValue()).toBe(s.organization.slug);
    const socials = page.locator('.ra-input-socials');
    await socials.getByRole('button', { name: 'Add' }).click();
    await choose(page, /^Platform/, 'GitHub', socials);
    await socials.getByLabel(/^Profile URL/).fill('https://github.com/example-shop');
    await expectAccessible(page, 'settings: organization');
    await page.getByRole('button', { name: 'Save' }).click();
    await notification(/updated/i).waitFor();
    const org = await apiCall(srv.url, { cookie: await cookieHeader(context) }, 'GET', `/v1/organizations/${s.organization.id}`);
    expect(org.body.website).toBe('https://shop.example.com');
    expect(org.body.socials).toEqual([{ platform: 'github', url: 'https://github.com/example-shop' }]);

    // Members.
    await page.getByRole('tab', { name: 'Members' }).click();
    const members = page.getByRole('table', { name: 'Members' });
    await members.getByRole('cell', { name: s.email, exact: true }).waitFor();
    expect(await members.getByRole('combobox', { name: `Role of ${s.email}` }).textContent()).toBe('Owner');
    await expectAccessible(page, 'settings: members');

    // Invitations: send, resend, cancel.
    await page.getByRole('tab', { name: 'Invitations' }).click();
    const invitee = uniqueEmail('colleague');
    await page.getByLabel(/^Email to invite/).fill(invitee);
    await choose(page, 'Role', 'Admin');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await notification(`Invitation sent to ${invitee}`).waitFor();
    const row = page.getByRole('table', { name: 'Invitations' }).getByRole('row').filter({ hasText: invitee });
    await row.getByText('pending').waitFor();
    await waitForMailMatching(invitee, /invited you to/);
    await row.getByRole('button', { name: 'Resend' }).click();
    await notification(`Invitation sent again to ${invitee}`).waitFor();
    await expectAccessible(page, 'settings: invitations');
    await shot(page, 'admin-settings-invitations');
    await row.getByRole('button', { name: 'Cancel' }).click();
    await notification('Invitation cancelled').waitFor();
    await row.getByText('canceled').waitFor();

    // Teams: create, rename, remove.
    await page.getByRole('tab', { name: 'Teams' }).click();
    await page.getByLabel(/^New team name/).fill('Support');
    await page.getByRole('button', { name: 'Create team' }).click();
    const teams = page.getByRole('table', { name: 'Teams' });
    await teams.getByText('Support').waitFor();
    await teams.getByRole('row').filter({ hasText: 'Support' }).getByRole('button', { name: 'Rename' }).click();
    await teams.getByLabel('Team name').fill('Customer support');
    await teams.getByRole('button', { name: 'Save' }).click();
    await teams.getByText('Customer support').waitFor();
    await expectAccessible(page, 'settings: teams');
    await shot(page, 'admin-settings-teams');
  }, 120_000);
});
