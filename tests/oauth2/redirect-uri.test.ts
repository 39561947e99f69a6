/**
 * `redirect_uri` at the token endpoint as RFC 6749 §4.1.3 says, met through `openid-client`: required
 * and identical only when the authorization request included it. A relying party whose authorization
 * request left it out (one registered URI) exchanges its code without naming it; one that named it in
 * the authorization request but not in the token request, or named another, is refused `invalid_grant`.
 * `openid-client` always sends the callback URL as `redirect_uri`; the relying party that leaves it out
 * of the token request is the same library with a fetch that drops that one form field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { seller, type TestServer } from '../harness.ts';
import { consent, proxiedFetch, register, relyingParty, startOAuthServer, type Registered } from './helpers.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
let single: Registered;
let double: Registered;
const REDIRECT = 'http://127.0.0.1:5599/callback';
const OTHER = 'http://127.0.0.1:5599/other-callback';

beforeAll(async () => {
  srv = await startOAuthServer();
  s = await seller(srv.url);
  single = (await register(srv, s.cookie, { client_name: 'One URI', redirect_uris: [REDIRECT], scope: 'openid products:read' })).body;
  double = (await register(srv, s.cookie, { client_name: 'Two URIs', redirect_uris: [REDIRECT, OTHER], scope: 'openid products:read' })).body;
});
afterAll(async () => {
  await srv?.close();
});

/** The same relying party, whose token requests carry no `redirect_uri`. */
async function withoutRedirectUriAtToken(c: Registered): Promise<oidc.Configuration> {
  const config = await relyingParty(srv, c);
  const through = proxiedFetch(srv);
  config[oidc.customFetch] = (url, options) => {
    if (new URL(url).pathname.endsWith('/token') && options.body instanceof URLSearchParams) options.body.delete('redirect_uri');
    return through(url, options as RequestInit);
  };
  return config;
}

/** Authorizes (approved through the consent API) and answers where the browser was sent back, with the PKCE verifier and state. */
async function authorize(config: oidc.Configuration, params: Record<string, string>) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const url = oidc.buildAuthorizationUrl(config, {
    scope: 'openid products:read',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    ...params,
  });
  const c = await consent(srv, s.cookie, url);
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  return { callback: new URL(c.body.redirect_to), checks: { pkceCodeVerifier: verifier, expectedState: state } };
}

async function refusal(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(oidc.ResponseBodyError);
  return (err as oidc.ResponseBodyError).error;
}

describe('redirect_uri at the token endpoint (RFC 6749 §4.1.3)', () => {
  it('is not required when the authorization request left it out', async () => {
    const config = await withoutRedirectUriAtToken(single);
    const { callback, checks } = await authorize(config, {});
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    const me = await fetch(`${srv.url}/v1/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
  });

  it('may still be sent when left out of the authorization request, if it is the registered one', async () => {
    const config = await relyingParty(srv, single);
    const { callback, checks } = await authorize(config, {});
    const tokens = await oidc.authorizationCodeGrant(config, callback, checks);
    expect(tokens.access_token).toMatch(/\S/);
  });

  it('is required when the authorization request included it', async () => {
    const config = await withoutRedirectUriAtToken(single);
    const { callback, checks } = await authorize(config, { redirect_uri: REDIRECT });
    expect(await refusal(oidc.authorizationCodeGrant(config, callback, checks))).toBe('invalid_grant');
  });

  it('must then be identical: another registered URI is refused', async () => {
    const config = await relyingParty(srv, double);
    const { callback, checks } = await authorize(config, { redirect_uri: REDIRECT });
    const elsewhere = new URL(OTHER);
    for (const [k, v] of callback.searchParams) elsewhere.searchParams.set(k, v);
    expect(await refusal(oidc.authorizationCodeGrant(config, elsewhere, checks))).toBe('invalid_grant');
    // The same code with the identical URI is not replayable after the refusal used it; a fresh one works.
    const again = await authorize(config, { redirect_uri: REDIRECT });
    const tokens = await oidc.authorizationCodeGrant(config, again.callback, again.checks);
    expect(tokens.access_token).toMatch(/\S/);
  });
});
