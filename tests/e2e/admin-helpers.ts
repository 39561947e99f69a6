/**
 * Shared pieces of the seller-console browser tests (tests/e2e/admin-*.test.ts): one Chromium,
 * screenshots under .ci/out/screenshots/, axe-core checks, calls with the browser's session, and
 * "wait until the page shows it" loops that end on the positive event.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterEach, expect } from 'vitest';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';

export const SCREENSHOTS = path.resolve('.ci/out/screenshots');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export async function launch(): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export async function newContext(browser: Browser, origin: string, viewport = { width: 1366, height: 900 }): Promise<BrowserContext> {
  const context = await browser.newContext({ viewport, locale: 'en-US', timezoneId: 'UTC' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin });
  context.setDefaultTimeout(20_000);
  return context;
}

export const shot = (page: Page, name: string) => page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });

/**
 * After a failed test of the file, leaves the page as it was for whoever reads the failure: a
 * screenshot `<prefix>-failed-<test>.png`, and the page's address and the text of every alert it
 * shows (error banners, notifications) on stderr.
 */
export function captureFailures(prefix: string, page: () => Page | undefined): void {
  afterEach(async (ctx) => {
    const p = page();
    if (ctx.task.result?.state !== 'fail' || !p || p.isClosed()) return;
    await shot(p, `${prefix}-failed-${ctx.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(() => {});
    const alerts = await p
      .getByRole('alert')
      .allInnerTexts()
      .catch(() => [] as string[]);
    console.error(`[${prefix}] failed on ${p.url()}; alerts shown: ${alerts.length ? alerts.map((a) => JSON.stringify(a)).join(', ') : 'none'}`);
  });
}

/** axe-core on the current page: no violation of impact serious or critical. Evaluated through the
 * DevTools protocol, so a Content-Security-Policy does not stop it. */
export async function expectAccessible(page: Page, name: string): Promise<void> {
  // The page has settled (nothing loading any more) …
  await page.waitForFunction(() => !document.querySelector('[role="progressbar"]'), undefined, { timeout: 20_000 });
  // … and colours are checked as they end up, not halfway through a transition.
  await page.evaluate(() => {
    if (document.getElementById('e2e-no-motion')) return;
    const style = document.createElement('style');
    style.id = 'e2e-no-motion';
    style.textContent = '*, *::before, *::after { transition: none !important; animation: none !important; }';
    document.head.appendChild(style);
  });
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run: (ctx: Document, opts: object) => Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
    const result = await axe.run(document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => n.target.join(' ')).join(', ')}`);
  });
  expect(violations, `accessibility of ${name}`).toEqual([]);
}

/** The browser session's cookies as a header, for API calls made as the signed-in seller. */
export async function cookieHeader(context: BrowserContext): Promise<string> {
  return (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ');
}

export async function apiCall<T = any>(
  base: string,
  auth: { cookie?: string; token?: string },
  method: string,
  pathname: string,
  body?: unknown,
): Promise<{ status: number; body: T }> {
  const res = await fetch(`${base}${pathname}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(auth.cookie ? { cookie: auth.cookie, origin: base } : {}),
      ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : null) as T };
}

/** Polls until `fn` returns a truthy value (work done by workflows after the request answered). */
export async function until<T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 45_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Reloads the page until the locator shows (for state a workflow writes after the page loaded).
 * Each attempt lets the page load fully (a busy machine can take seconds) before reloading. */
export async function reloadUntilVisible(page: Page, locator: Locator, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await locator.first().waitFor({ timeout: 8_000 });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await page.reload();
    }
  }
}

/** Opens a list row's page: clicks the row until the address is the record's page (a click that lands
 * while the list is re-rendering after a refetch is lost). */
export async function openRow(page: Page, row: Locator, url: RegExp): Promise<void> {
  await until(async () => {
    if (url.test(page.url())) return true;
    await row.first().click({ timeout: 5_000 }).catch(() => undefined);
    return page.waitForURL(url, { timeout: 5_000 }).then(
      () => true,
      () => false,
    );
  });
}

/** Picks an option of a react-admin / MUI select by the select's label (optionally inside `scope`). */
export async function choose(page: Page, label: RegExp | string, option: string | RegExp, scope?: Locator): Promise<void> {
  await (scope ?? page).getByRole('combobox', { name: label }).click();
  await page.getByRole('option', { name: option }).click();
}

/** Buys through the public checkout API, as a buyer's browser would: client secret, then confirm with a test card. */
export async function buy(base: string, clientSecret: string, buyer: { email: string; name: string }, extra: Record<string, unknown> = {}) {
  const res = await apiCall(base, {}, 'POST', `/v1/checkouts/client/${clientSecret}/confirm`, {
    customer_email: buyer.email,
    customer_name: buyer.name,
    customer_billing_address: { country: 'US' },
    confirmation_token_id: 'tok_visa',
    ...extra,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; status: string };
}
