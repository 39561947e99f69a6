/**
 * Pieces of the OAuth2 provider tests: a test server whose PUBLIC_URL (the issuer) is a public name
 * that a proxy maps onto it, a relying party built with `openid-client` (discovery through that
 * proxy), client registration by a signed-in seller, and the consent a signed-in user gives through
 * the consent page's API.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';
import { startTestServer, type TestServer } from '../harness.ts';

/** The API's public name in these tests (what a reverse proxy would serve it as). */
export const ISSUER = 'http://oauth2-issuer.test';

export async function startOAuthServer(env: Record<string, string> = {}): Promise<TestServer> {
  return startTestServer({ worker: false, env: { PUBLIC_URL: ISSUER, RATE_LIMIT_ENABLED: 'false', ...env } });
}

/** `fetch` through the "proxy": requests to the public name reach the test server. */
export function proxiedFetch(srv: TestServer): typeof fetch {
  return ((input: string | URL | Request, init?: RequestInit) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return fetch(onServer(srv, url), init);
  }) as typeof fetch;
}

export const onServer = (srv: TestServer, url: string) => (url.startsWith(ISSUER) ? srv.url + url.slice(ISSUER.length) : url);

export interface Registered {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  token_endpoint_auth_method: string;
  scope: string;
}

export async function register(srv: TestServer, cookie: string, body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const res = await fetch(`${srv.url}/v1/oauth2/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, origin: srv.url },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

/** openid-client's Configuration for a registered client, discovered at the issuer. */
export async function relyingParty(srv: TestServer, c: Registered, method: 'post' | 'basic' | 'none' = 'post'): Promise<oidc.Configuration> {
  const auth =
    method === 'none' ? oidc.None() : method === 'basic' ? oidc.ClientSecretBasic(c.client_secret) : oidc.ClientSecretPost(c.client_secret);
  return oidc.discovery(new URL(ISSUER), c.client_id, undefined, auth, {
    execute: [oidc.allowInsecureRequests],
    [oidc.customFetch]: proxiedFetch(srv) as oidc.CustomFetch,
  });
}

/** What the consent page does: read the request (GET /v1/oauth2/authorize), then approve or deny it. */
export async function consent(
  srv: TestServer,
  cookie: string,
  authorizationUrl: URL,
  opts: { action?: 'allow' | 'deny'; sub?: string } = {},
): Promise<{ describe: { status: number; body: any }; status: number; body: any }> {
  const query = Object.fromEntries(authorizationUrl.searchParams);
  const d = await fetch(`${srv.url}/v1/oauth2/authorize?${authorizationUrl.searchParams}`, { headers: { cookie } });
  const describe = { status: d.status, body: await d.json() };
  const res = await fetch(`${srv.url}/v1/oauth2/consent`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie, origin: srv.url },
    body: JSON.stringify({ ...query, action: opts.action ?? 'allow', ...(opts.sub ? { sub: opts.sub } : {}) }),
  });
  return { describe, status: res.status, body: await res.json() };
}

/** A form post to the token endpoint, as a client without a library would make it. */
export async function tokenRequest(srv: TestServer, form: Record<string, string>, headers: Record<string, string> = {}) {
  const res = await fetch(`${srv.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: await res.json() };
}

/** A third-party app's redirect URI: a local server that records the query it is sent to. */
export async function callbackServer(): Promise<{ url: string; received: URL[]; close: () => Promise<void> }> {
  const received: URL[] = [];
  const server: Server = createServer((req, res) => {
    received.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html lang="en"><title>Example app</title><h1>Signed in to Example app</h1></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}/callback`, received, close: () => new Promise((r) => server.close(() => r())) };
}
