/**
 * The invitation page of the seller console in headless Chromium against the real API and mail
 * catcher: an owner invites, the mail's link opens `#/accept-invitation/:id`, the invitee signs in
 * there, sees the organization, inviter and role, accepts, and is listed as a member.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { User } from '../../api/src/auth/entities.ts';
import { seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { linkIn, waitForMailMatching } from '../auth/helpers.ts';

const ARTIFACTS = path.resolve('.test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const PASSWORD = 'correct horse battery';

let srv: TestServer;
let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  srv = await startTestServer({ worker: false, env: { SERVE_UI: 'true', RATE_LIMIT_ENABLED: 'false' } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

/** A user with a verified address (accepting needs one); returns the email and session cookies. */
async function verifiedUser(name: string): Promise<{ email: string; cookies: { name: string; value: string }[] }> {
  const email = uniqueEmail('invitee');
  const res = await fetch(`${srv.url}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, name }),
  });
  expect(res.status).toBe(200);
  await srv.deps.orm.em.fork().nativeUpdate(User, { email }, { emailVerified: true });
  const cookies = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .filter((c) => c.includes('session_token='))
    .map((c) => ({ name: c.slice(0, c.indexOf('=')), value: c.slice(c.indexOf('=') + 1) }));
  return { email, cookies };
}

/** Invites `email` as `role` into the seller's organization; returns the link of the mail it got. */
async function invite(owner: Awaited<ReturnType<typeof seller>>, email: string, role: string) {
  const res = await fetch(`${srv.url}/api/auth/organization/invite-member`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: owner.cookie },
    body: JSON.stringify({ email, role, organizationId: owner.organization.id }),
  });
  expect(res.status).toBe(200);
  const invitation = (await res.json()) as { id: string };
  const mail = await waitForMailMatching(email, /invited you to/);
  const link = new URL(linkIn(mail, '/accept-invitation/'));
  // The mail points at the console's invitation page on the public origin.
  expect(link.pathname).toBe('/dashboard/');
  expect(link.hash).toBe(`#/accept-invitation/${invitation.id}`);
  return { invitation, url: `${srv.url}${link.pathname}${link.hash}` };
}

describe('invitation page', () => {
  it('signs the invitee in, shows the invitation, accepts it and lists them as a member', async () => {
    const owner = await seller(srv.url);
    const { email } = await verifiedUser('Ivy Invitee');
    const { url } = await invite(owner, email, 'admin');

    const page = await browser.newPage();
    await page.goto(url);
    await page.getByText('Sign in with the email address the invitation was sent to').waitFor({ timeout: 20_000 });
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();

    await page.getByTestId('organization').waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('organization').textContent()).toBe(owner.organization.name);
    expect(await page.getByTestId('role').textContent()).toBe('admin');
    await page.getByText(`${owner.email} invited you`).waitFor({ timeout: 5_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-invitation.png') });

    await page.getByRole('button', { name: 'Accept invitation' }).click();
    await page.getByText(`You joined ${owner.organization.name} as admin.`).waitFor({ timeout: 10_000 });
    const members = await page.getByTestId('members').textContent();
    expect(members).toContain(email);
    expect(members).toContain(owner.email);
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-invitation-accepted.png') });
    await page.close();

    // The owner sees the new admin among the members.
    const list = await fetch(`${srv.url}/api/auth/organization/list-members?organizationId=${owner.organization.id}`, {
      headers: { cookie: owner.cookie },
    });
    const { members: listed } = (await list.json()) as { members: { role: string; user: { email: string } }[] };
    expect(listed.find((m) => m.user.email === email)).toMatchObject({ role: 'admin' });
  });

  it('tells someone signed in with another address that the invitation is not theirs, and can decline as the recipient', async () => {
    const owner = await seller(srv.url);
    const { email } = await verifiedUser('Rita Recipient');
    const someoneElse = await verifiedUser('Oscar Other');
    const { url } = await invite(owner, email, 'member');

    // The browser is signed in as someone else than the recipient.
    const page = await browser.newPage();
    await page.context().addCookies(someoneElse.cookies.map((c) => ({ ...c, url: srv.url })));
    await page.goto(url);
    await page.getByText('This invitation was sent to another email address.').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Sign in as someone else' }).click();

    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Decline' }).click();
    await page.getByText(`You declined the invitation to ${owner.organization.name}.`).waitFor({ timeout: 10_000 });
    await page.close();

    const list = await fetch(`${srv.url}/api/auth/organization/list-members?organizationId=${owner.organization.id}`, {
      headers: { cookie: owner.cookie },
    });
    const { members } = (await list.json()) as { members: { user: { email: string } }[] };
    expect(members.map((m) => m.user.email)).toEqual([owner.email]);
  });
});
