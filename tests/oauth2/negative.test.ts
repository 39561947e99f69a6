/**
 * What the authorization server refuses: unregistered redirect URIs (loopback ports excepted),
 * missing or wrong PKCE verifiers, a reused code (which also revokes what it produced), a reused
 * refresh token (the whole family is revoked), a wrong client secret, a public client without PKCE,
 * and scopes beyond what was granted.
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, type TestServer } from '../harness.ts';
import { consent, register, startOAuthServer, tokenRequest, type Registered } from './helpers.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
let client: Registered;
let publicClient: Registered;
const REDIRECT = 'http://127.0.0.1:5599/callback';

beforeAll(async () => {
  srv = await startOAuthServer();
  s = await seller(srv.url);
  client = (await register(srv, s.cookie, { client_name: 'Confidential', redirect_uris: [REDIRECT], scope: 'openid products:read products:write' })).body;
  publicClient = (
    await register(srv, s.cookie, { client_name: 'Native', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', scope: 'openid products:read' })
  ).body;
});
afterAll(async () => {
  await srv?.close();
});

const pkce = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

function authUrl(c: Registered, params: Record<string, string | undefined>): URL {
  const u = new URL('http://oauth2-issuer.test/dashboard/oauth2/authorize');
  const all: Record<string, string | undefined> = { client_id: c.client_id, response_type: 'code', redirect_uri: REDIRECT, state: 'st', ...params };
  for (const [k, v] of Object.entries(all)) if (v !== undefined) u.searchParams.set(k, v);
  return u;
}

/** A code approved by the seller (the redirect's `code`). */
async function approvedCode(c: Registered, params: Record<string, string | undefined>): Promise<string> {
  const r = await consent(srv, s.cookie, authUrl(c, params));
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return new URL(r.body.redirect_to).searchParams.get('code')!;
}

const confidential = () => ({ client_id: client.client_id, client_secret: client.client_secret });
const bearer = (t: string) => fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${t}` } });

describe('OAuth2 provider refusals', () => {
  it('refuses a redirect URI that is not registered, and accepts a registered loopback one on another port', async () => {
    for (const redirect of ['https://evil.example/callback', 'http://127.0.0.1:5599/other', 'http://localhost:5599/callback']) {
      const r = await consent(srv, s.cookie, authUrl(client, { redirect_uri: redirect, scope: 'products:read' }));
      expect([r.describe.status, r.describe.body.error, r.status, r.body.error]).toEqual([400, 'invalid_request', 400, 'invalid_request']);
      expect(r.body.redirect_to).toBeUndefined();
    }
    const other = await consent(srv, s.cookie, authUrl(client, { redirect_uri: 'http://127.0.0.1:6123/callback', scope: 'products:read' }));
    expect(other.status).toBe(200);
    expect(new URL(other.body.redirect_to).origin).toBe('http://127.0.0.1:6123');

    // The token request must name the redirect URI the code was issued for.
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const t = await tokenRequest(srv, { grant_type: 'authorization_code', code, redirect_uri: 'http://127.0.0.1:6123/callback', code_verifier: verifier, ...confidential() });
    expect([t.status, t.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('refuses a missing or wrong PKCE verifier', async () => {
    const { challenge } = pkce();
    const missing = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const a = await tokenRequest(srv, { grant_type: 'authorization_code', code: missing, redirect_uri: REDIRECT, ...confidential() });
    expect([a.status, a.body.error, a.body.access_token]).toEqual([400, 'invalid_grant', undefined]);
    const wrong = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const b = await tokenRequest(srv, { grant_type: 'authorization_code', code: wrong, redirect_uri: REDIRECT, code_verifier: pkce().verifier, ...confidential() });
    expect([b.status, b.body.error, b.body.access_token]).toEqual([400, 'invalid_grant', undefined]);
    // A plain challenge is not accepted at all.
    const plain = await consent(srv, s.cookie, authUrl(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'plain' }));
    expect([plain.status, plain.body.error]).toEqual([400, 'invalid_request']);
  });

  it('refuses a reused code and revokes the tokens the first exchange produced', async () => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, ...confidential() };
    const first = await tokenRequest(srv, form);
    expect(first.status).toBe(200);
    expect((await bearer(first.body.access_token)).status).toBe(200);
    const again = await tokenRequest(srv, form);
    expect([again.status, again.body.error]).toEqual([400, 'invalid_grant']);
    expect((await bearer(first.body.access_token)).status).toBe(401);
    const r = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, ...confidential() });
    expect([r.status, r.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('revokes the whole refresh-token family when a spent refresh token comes back', async () => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read products:write', code_challenge: challenge, code_challenge_method: 'S256' });
    const first = await tokenRequest(srv, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, ...confidential() });
    expect(first.status).toBe(200);
    const second = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, ...confidential() });
    expect(second.status).toBe(200);
    expect((await bearer(second.body.access_token)).status).toBe(200);
    // The stolen first refresh token is replayed: refused, and the legitimate new tokens die with it.
    const replay = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, ...confidential() });
    expect([replay.status, replay.body.error]).toEqual([400, 'invalid_grant']);
    expect((await bearer(second.body.access_token)).status).toBe(401);
    const next = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: second.body.refresh_token, ...confidential() });
    expect([next.status, next.body.error]).toEqual([400, 'invalid_grant']);
  });

  it('refuses a wrong client secret, by post and by basic', async () => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const post = await tokenRequest(srv, { ...form, client_id: client.client_id, client_secret: `${client.client_secret}x` });
    expect([post.status, post.body.error]).toEqual([401, 'invalid_client']);
    const basic = await tokenRequest(srv, form, { authorization: `Basic ${Buffer.from(`${client.client_id}:wrong`).toString('base64')}` });
    expect([basic.status, basic.body.error]).toEqual([401, 'invalid_client']);
    // The client registered client_secret_post: the right secret by basic is not its method either.
    const method = await tokenRequest(srv, form, { authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` });
    expect([method.status, method.body.error]).toEqual([401, 'invalid_client']);
    // The code was not consumed by those attempts.
    const ok = await tokenRequest(srv, { ...form, ...confidential() });
    expect(ok.status).toBe(200);
    // Introspection and revocation take client credentials too.
    const intro = await fetch(`${srv.url}/v1/oauth2/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: ok.body.access_token, client_id: client.client_id, client_secret: 'nope' }),
    });
    expect(intro.status).toBe(401);
  });

  it('makes a public client use PKCE, and lets it exchange without a secret when it does', async () => {
    const none = await consent(srv, s.cookie, authUrl(publicClient, { scope: 'products:read' }));
    expect([none.describe.status, none.status, none.body.error]).toEqual([400, 400, 'invalid_request']);
    const { verifier, challenge } = pkce();
    const code = await approvedCode(publicClient, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const t = await tokenRequest(srv, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, client_id: publicClient.client_id });
    expect(t.status).toBe(200);
    expect(t.body.access_token).toMatch(/^polar_at_u_/);
  });

  it('refuses scopes beyond the grant on refresh and beyond the client at authorization; narrowing is allowed', async () => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    const first = await tokenRequest(srv, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, ...confidential() });
    expect(first.body.scope).toBe('products:read');
    const wider = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, scope: 'products:read products:write', ...confidential() });
    expect([wider.status, wider.body.error]).toEqual([400, 'invalid_scope']);
    const write = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.body.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Nope', organization_id: s.organization.id, prices: [{ amount_type: 'free' }] }),
    });
    expect(write.status).toBe(403);
    const beyondClient = await consent(srv, s.cookie, authUrl(client, { scope: 'products:read customers:write', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect([beyondClient.status, beyondClient.body.error]).toEqual([400, 'invalid_scope']);
    const console = await consent(srv, s.cookie, authUrl(client, { scope: 'web_default', code_challenge: challenge, code_challenge_method: 'S256' }));
    expect([console.status, console.body.error]).toEqual([400, 'invalid_scope']);

    const { verifier: v2, challenge: c2 } = pkce();
    const code2 = await approvedCode(client, { scope: 'openid products:read products:write', code_challenge: c2, code_challenge_method: 'S256' });
    const both = await tokenRequest(srv, { grant_type: 'authorization_code', code: code2, redirect_uri: REDIRECT, code_verifier: v2, ...confidential() });
    const narrowed = await tokenRequest(srv, { grant_type: 'refresh_token', refresh_token: both.body.refresh_token, scope: 'products:read', ...confidential() });
    expect([narrowed.status, narrowed.body.scope, narrowed.body.id_token]).toEqual([200, 'products:read', undefined]);
  });

  it('answers a denied consent with access_denied and the state, and refuses a token request that is not form-encoded', async () => {
    const r = await consent(srv, s.cookie, authUrl(client, { scope: 'products:read', state: 'xyz' }), { action: 'deny' });
    expect(r.status).toBe(200);
    const back = new URL(r.body.redirect_to);
    expect([back.origin + back.pathname, back.searchParams.get('error'), back.searchParams.get('state'), back.searchParams.get('code')]).toEqual([
      REDIRECT,
      'access_denied',
      'xyz',
      null,
    ]);
    const json = await fetch(`${srv.url}/v1/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', ...confidential() }),
    });
    expect([json.status, (await json.json()).error]).toEqual([400, 'invalid_request']);
    // The authorization request needs a signed-in user.
    const anon = await fetch(`${srv.url}/v1/oauth2/authorize?client_id=${client.client_id}&response_type=code`);
    expect(anon.status).toBe(401);
  });
});

describe('OAuth2 provider lifetimes', () => {
  it('refuses a code past its 10 minutes', async () => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(client, { scope: 'products:read', code_challenge: challenge, code_challenge_method: 'S256' });
    // The code was issued for 10 minutes; then its expiry is moved into the past.
    const conn = srv.deps.orm.em.getConnection();
    const [row] = await conn.execute<{ seconds: string }[]>(
      `select extract(epoch from expires_at - created_at)::int as seconds from oauth2_authorization_codes where code_hash = encode(sha256(?::bytea), 'hex')`,
      [code],
    );
    expect(Number(row!.seconds)).toBe(600);
    await conn.execute(`update oauth2_authorization_codes set expires_at = now() - interval '1 minute' where code_hash = encode(sha256(?::bytea), 'hex')`, [code]);
    const t = await tokenRequest(srv, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier, ...confidential() });
    expect([t.status, t.body.error, t.body.error_description]).toEqual([400, 'invalid_grant', 'Authorization code expired']);
  });
});
