/** The browser's side of an OAuth round trip in Node: the provider's pages, then our callback. */
import { expect } from 'vitest';
import { CookieJar, type AuthClient } from '../auth/helpers.ts';
import type { OidcServer, TestAccount } from './oidc-server.ts';

export const PUBLIC_URL = 'http://localhost:8000';

/** Follows the provider's redirects (login, consent) until it sends the browser elsewhere. */
export async function throughProvider(op: OidcServer, start: string, jar = new CookieJar()): Promise<URL> {
  let url = new URL(start);
  for (let i = 0; i < 10; i++) {
    if (url.origin !== new URL(op.issuer).origin) return url;
    const res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(res);
    const location = res.headers.get('location');
    if (res.status < 300 || res.status >= 400 || !location) throw new Error(`provider answered ${res.status}: ${await res.text()}`);
    url = new URL(location, url);
  }
  throw new Error('too many provider redirects');
}

/** Our callback as the browser would call it (PUBLIC_URL's origin replaced by the test server's). */
export async function toCallback(c: AuthClient, serverUrl: string, providerRedirect: URL): Promise<{ status: number; location: URL | null }> {
  expect(providerRedirect.origin).toBe(PUBLIC_URL);
  const res = await c.raw(`${serverUrl}${providerRedirect.pathname}${providerRedirect.search}`);
  const location = res.headers.get('location');
  return { status: res.status, location: location ? new URL(location, PUBLIC_URL) : null };
}

/** A whole sign-in: sign-in/social → provider login as `account` → callback; the final redirect. */
export async function socialRoundTrip(
  c: AuthClient,
  serverUrl: string,
  op: OidcServer,
  account: TestAccount | null,
  body: Record<string, unknown> = {},
  path = '/api/auth/sign-in/social',
) {
  const res = await c.raw(`${serverUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ provider: 'google', ...body }),
  });
  const started = (await res.json()) as { url: string; redirect: boolean };
  expect(res.status, JSON.stringify(started)).toBe(200);
  op.nextLogin.account = account;
  const back = await throughProvider(op, started.url);
  return { started, back, ...(await toCallback(c, serverUrl, back)) };
}

export const errorOf = (location: URL | null) => location?.searchParams.get('error') ?? null;

let n = 0;
export function oidcAccount(overrides: Partial<TestAccount> = {}): TestAccount {
  n += 1;
  const id = `${Date.now().toString(36)}${n}`;
  return { sub: `sub-${id}`, email: `social-${id}@example.com`, email_verified: true, name: `Social User ${n}`, ...overrides };
}
