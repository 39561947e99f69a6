/**
 * Shared by the portal-ui browser tests (checkout-*.test.ts, portal-*.test.ts): one Chromium per
 * file, a seller with a catalogue built over HTTP, accessibility checks with axe-core, screenshots in
 * .ci/out/screenshots/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { seller, type TestServer } from '../harness.ts';

export const SCREENSHOTS = path.resolve('.ci/out/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE = path.resolve('node_modules/axe-core/axe.min.js');
let axeSource: string | undefined;

export async function launchBrowser(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export const PHONE = { width: 390, height: 844 };
export const DESKTOP = { width: 1280, height: 900 };

export async function newPage(browser: Browser, viewport = DESKTOP): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({ viewport, locale: 'en-US', isMobile: viewport.width < 500, hasTouch: viewport.width < 500 });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  return { context, page };
}

export async function shot(page: Page, name: string) {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

/** Runs axe-core on the page: no serious or critical violations. */
export async function expectAccessible(page: Page, label: string) {
  // Evaluated through the DevTools protocol: the page's CSP (script-src 'self') stays in force.
  axeSource ??= readFileSync(AXE, 'utf8');
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: unknown, opts: unknown) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`);
  });
  expect(violations, `axe on ${label}`).toEqual([]);
}

/** Presses Tab until the element labelled `label` has focus (keyboard-only navigation). */
export async function tabTo(page: Page, label: string | RegExp, role?: 'button' | 'textbox') {
  const target = role ? page.getByRole(role, { name: label }) : page.getByLabel(label);
  for (let i = 0; i < 40; i++) {
    if (await target.evaluate((el) => el === document.activeElement).catch(() => false)) return;
    await page.keyboard.press('Tab');
  }
  throw new Error(`could not reach ${String(label)} with the keyboard`);
}

export const SELLER_SCOPES = [
  'products:read', 'products:write', 'benefits:read', 'benefits:write', 'discounts:read', 'discounts:write',
  'checkouts:read', 'checkouts:write', 'custom_fields:read', 'custom_fields:write', 'customers:read', 'customers:write',
  'customer_sessions:write', 'orders:read', 'subscriptions:read', 'subscriptions:write', 'license_keys:read', 'license_keys:write',
  'organizations:read', 'organizations:write',
];

export type Shop = Awaited<ReturnType<typeof shop>>;

/** A seller and a small API client with its organization access token. */
export async function shop(srv: TestServer) {
  const s = await seller(srv.url, SELLER_SCOPES);
  const call = async (method: string, p: string, body?: unknown, token: string | null = s.token) => {
    const res = await fetch(`${srv.url}${p}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  const created = async (method: string, p: string, body: unknown) => {
    const r = await call(method, p, body);
    if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  return {
    ...s,
    call,
    created,
    async product(body: Record<string, unknown>, benefitIds: string[] = []) {
      const p = await created('POST', '/v1/products/', body);
      if (benefitIds.length) await created('POST', `/v1/products/${p.id}/benefits`, { benefits: benefitIds });
      return p as { id: string; name: string; prices: { id: string }[] };
    },
    async licenseBenefit(description = 'License key') {
      return (await created('POST', '/v1/benefits/', {
        type: 'license_keys',
        description,
        properties: { prefix: 'pro', expires: null, activations: { limit: 3, enable_customer_admin: true }, limit_usage: null },
      })) as { id: string };
    },
    async checkout(body: Record<string, unknown>) {
      return (await created('POST', '/v1/checkouts/', body)) as { id: string; client_secret: string; url: string };
    },
    async checkoutStatus(id: string): Promise<{ status: string; total_amount: number }> {
      return (await call('GET', `/v1/checkouts/${id}`)).body;
    },
  };
}

/** Waits for `fn` to return a truthy value (work that runs after a request answered). */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Types a card into the sandbox card form. */
export async function fillCard(page: Page | import('playwright-core').FrameLocator, number: string) {
  await page.getByLabel('Card number').fill(number);
  await page.getByLabel('Expiry date (MM / YY)').fill('12 / 34');
  await page.getByLabel('Security code (CVC)').fill('123');
}
