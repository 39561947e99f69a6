/**
 * Connecting the GitHub account a repository benefit needs, in Chromium: the portal's Benefits page
 * offers "Connect GitHub", the browser goes to the local GitHub server's OAuth page (tests/fakes), the
 * customer signs in there and authorizes, comes back to the portal, and the repository access is
 * granted (the collaborator invitation is at the GitHub server). axe-core on the portal pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github-server.ts';
import { expectAccessible, launchBrowser, newPage, PHONE, shop, shot, until, type Shop } from './portal-fixtures.ts';

let srv: TestServer;
let browser: Browser;
let github: FakeGitHub;
let s: Shop;
const email = `connect-buyer-${Date.now()}@example.com`;

beforeAll(async () => {
  github = await startFakeGitHub();
  [srv, browser] = await Promise.all([
    startTestServer({
      env: {
        SERVE_UI: 'true',
        GITHUB_API_URL: github.url,
        GITHUB_TOKEN: github.token,
        GITHUB_OAUTH_URL: github.url,
        GITHUB_BENEFITS_CLIENT_ID: github.oauth.clientId,
        GITHUB_BENEFITS_CLIENT_SECRET: github.oauth.clientSecret,
      },
    }),
    launchBrowser(),
  ]);
  // The OAuth callback registered with GitHub is on this server.
  Object.assign(srv.deps.cfg, { PUBLIC_URL: srv.url });
  s = await shop(srv);
  github.addRepository('acme', 'engine');
  github.addUser('octo-browser');
  const benefit = await s.created('POST', '/v1/benefits/', {
    type: 'github_repository',
    description: 'Engine source code',
    properties: { repository_owner: 'acme', repository_name: 'engine', permission: 'pull' },
  });
  const product = await s.product({ name: 'Engine license', prices: [{ amount_type: 'fixed', price_amount: 4900 }] }, [benefit.id]);
  const c = await s.checkout({ product_id: product.id });
  const r = await s.call('POST', `/v1/checkouts/client/${c.client_secret}/confirm`, {
    customer_email: email,
    customer_name: 'Gita Hub',
    customer_billing_address: { country: 'US' },
    confirmation_token_id: 'tok_visa',
  }, null);
  if (r.status !== 200) throw new Error(`confirm: ${r.status} ${JSON.stringify(r.body)}`);
  await until(async () => (await s.checkoutStatus(c.id)).status === 'succeeded');
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await srv?.close();
  await github?.close();
});

describe('connecting a GitHub account in the portal', () => {
  for (const [label, viewport] of [['desktop', undefined], ['phone', PHONE]] as const) {
    it(`connects GitHub and gets the repository benefit (${label})`, async () => {
      const { context, page } = await newPage(browser, viewport);
      const customers = await s.call('GET', `/v1/customers/?email=${encodeURIComponent(email)}`);
      const session = await s.call('POST', '/v1/customer-sessions/', { customer_id: customers.body.items[0].id });
      await page.goto(session.body.customer_portal_url.replace(/^https?:\/\/[^/]+/, srv.url));
      await page.getByRole('heading', { name: 'Welcome back, Gita Hub' }).waitFor();
      await page.getByRole('navigation', { name: 'Customer portal' }).getByRole('link', { name: 'Benefits', exact: true }).click();
      const grant = page.getByRole('article', { name: /Engine source code/ });
      if (label === 'desktop') {
        await grant.getByText('Connect your GitHub account to get access to acme/engine.').waitFor();
        await expectAccessible(page, 'benefits, GitHub not connected');
        await shot(page, 'portal-connect-1-benefit-pending');
        await grant.getByRole('button', { name: 'Connect GitHub' }).click();
        await page.getByRole('heading', { name: 'Authorize application' }).waitFor();
        expect(new URL(page.url()).origin).toBe(new URL(github.url).origin);
        await shot(page, 'portal-connect-2-github-authorize');
        await page.getByLabel('Username').fill('octo-browser');
        await page.getByRole('button', { name: 'Authorize' }).click();
        await page.getByText('Your GitHub account is connected. Access is being set up.').waitFor();
        expect(page.url()).toBe(`${srv.url}/portal/${s.organization.slug}/benefits?connected=github`);
      }
      await grant.getByText('Access to acme/engine is granted to your GitHub account').waitFor();
      await expectAccessible(page, `benefits, GitHub connected (${label})`);
      if (viewport) await expect(page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).resolves.toBe(true);
      await shot(page, `portal-connect-3-granted-${label}`);
      expect(github.invitations('acme', 'engine').map((i) => i.login)).toEqual(['octo-browser']);
      await context.close();
    });
  }
});
