/**
 * The seller console and the customer portal in headless Chromium (Debian's, driven by playwright-core)
 * against the real API. Screenshots land in .test-artifacts/ for a person to look at.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { seller, startTestServer, type TestServer } from '../harness.ts';

const ARTIFACTS = path.resolve('.test-artifacts');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let srv: TestServer;
let browser: Browser;
beforeAll(async () => {
  mkdirSync(ARTIFACTS, { recursive: true });
  srv = await startTestServer({ env: { SERVE_UI: 'true' } });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await srv?.close();
});

describe('admin UI', () => {
  it('signs a seller in and lists their products', async () => {
    const s = await seller(srv.url);
    const res = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
      body: JSON.stringify({ name: 'Browser-tested plan', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 4900 }] }),
    });
    expect(res.status).toBe(201);

    const page = await browser.newPage();
    await page.goto(`${srv.url}/dashboard/`);
    await page.locator('input[name="email"]').fill(s.email);
    await page.locator('input[name="password"]').fill(s.password);
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.goto(`${srv.url}/dashboard/#/products`);
    await page.getByText('Browser-tested plan').waitFor({ timeout: 20_000 });
    await page.getByText('USD 49.00').first().waitFor({ timeout: 5_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'admin-products.png'), fullPage: true });
    await page.close();
  });

  it('refuses a wrong password on the login page', async () => {
    const s = await seller(srv.url);
    const page = await browser.newPage();
    await page.goto(`${srv.url}/dashboard/`);
    await page.locator('input[name="email"]').fill(s.email);
    await page.locator('input[name="password"]').fill('not the password');
    await page.getByRole('button', { name: /sign in/i }).click();
    await page.getByText('Invalid email or password').waitFor({ timeout: 10_000 });
    await page.close();
  });
});

describe('portal UI', () => {
  it('explains how to sign in when there is no customer session', async () => {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/portal/`);
    await page.getByRole('heading', { level: 1, name: 'Customer portal' }).waitFor({ timeout: 10_000 });
    // The heading shows signed in or not: wait for the explanation itself.
    await page.getByRole('heading', { name: /sign in/i }).waitFor({ timeout: 10_000 });
    await page.getByText(/to sign in, open the link from the email/i).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'portal-home.png') });
    await page.close();
  });

  it('tells a buyer that an unknown checkout does not exist', async () => {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/checkout/polar_c_doesnotexist`);
    await page.getByRole('heading', { name: 'Checkout' }).waitFor({ timeout: 10_000 });
    await page.getByText('This checkout does not exist or has expired.').waitFor({ timeout: 10_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'checkout-missing.png') });
    await page.close();
  });
});
