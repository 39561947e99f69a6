/**
 * The OAuth2 / OpenID Connect provider as a third-party app meets it through `openid-client` (a
 * certified relying-party library): discovery at the issuer, PKCE authorization approved by a
 * signed-in user, code exchange with an RS256 id token checked against the JWKS, userinfo, refresh
 * with rotation, introspection, revocation, and the access token on /v1 within its scopes and subject.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { Polar } from '@polar-sh/sdk';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { seller, type TestServer } from '../harness.ts';
import { consent, ISSUER, register, relyingParty, startOAuthServer, type Registered } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startOAuthServer();
});
afterAll(async () => {
  await srv?.close();
});

const REDIRECT = 'http://127.0.0.1:5599/callback';

async function authorize(config: oidc.Configuration, cookie: string, scope: string, extra: Record<string, string> = {}, sub?: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
    ...extra,
  });
  const c = await consent(srv, cookie, url, { sub });
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(c.body.redirect_to), {
    pkceCodeVerifier: verifier,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: scope.split(' ').includes('openid'),
  });
  return { tokens, consent: c, url };
}

describe('OAuth2 provider through openid-client', () => {
  it('discovers, authorizes with PKCE, exchanges, reads userinfo, refreshes, introspects, revokes, and the token works on /v1 within its scopes', async () => {
    const s = await seller(srv.url);
    const reg = await register(srv, s.cookie, {
      client_name: 'Example app',
      client_uri: 'https://example.com',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'openid profile email products:read products:write customers:read',
    });
    expect(reg.status).toBe(200);
    const client = reg.body as Registered;
    expect(client.client_id).toMatch(/^polar_ci_/);
    expect(client.client_secret).toMatch(/^polar_cs_.{40,}/);
    // Shown once: the list and the single read do not reveal it again.
    const listed = await (await fetch(`${srv.url}/v1/oauth2/`, { headers: { cookie: s.cookie } })).json();
    expect(listed.items.map((c: Registered) => [c.client_id, c.client_secret])).toEqual([[client.client_id, '']]);

    const config = await relyingParty(srv, client, 'post');
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(ISSUER);
    expect(meta.authorization_endpoint).toBe(`${ISSUER}/dashboard/oauth2/authorize`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);

    const { tokens, consent: c } = await authorize(config, s.cookie, 'openid profile email products:read');
    // What the consent page was shown: the client, the user subject, the scopes asked for.
    expect(c.describe.status).toBe(200);
    expect(c.describe.body).toMatchObject({
      client: { client_id: client.client_id, client_name: 'Example app', client_uri: 'https://example.com' },
      sub_type: 'user',
      sub: { email: s.email },
      scopes: ['openid', 'profile', 'email', 'products:read'],
    });
    expect(new URL(c.body.redirect_to).searchParams.get('iss')).toBe(ISSUER);

    expect(tokens.access_token).toMatch(/^polar_at_u_/);
    expect(tokens.refresh_token).toMatch(/^polar_rt_u_/);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope).toBe('openid profile email products:read');
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: ISSUER, aud: client.client_id, email: s.email, email_verified: false, name: 'Sally Seller' });

    // The id token is RS256 under a ≥2048-bit key published in the JWKS.
    const header = decodeProtectedHeader(tokens.id_token!);
    expect(header.alg).toBe('RS256');
    const jwksRes = await fetch(`${srv.url}/.well-known/jwks.json`);
    const jwks = await jwksRes.json();
    const key = jwks.keys.find((k: { kid: string }) => k.kid === header.kid);
    expect(Buffer.from(key.n, 'base64url').length * 8).toBeGreaterThanOrEqual(2048);
    const verified = await jwtVerify(tokens.id_token!, createRemoteJWKSet(new URL(`${srv.url}/.well-known/jwks.json`)), {
      issuer: ISSUER,
      audience: client.client_id,
    });
    expect(verified.payload.sub).toBe(claims.sub);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: claims.sub, email: s.email, email_verified: false, name: 'Sally Seller' });

    // The access token on /v1: products:read is granted (the official SDK), customers:read was not asked for.
    const polar = new Polar({ accessToken: tokens.access_token, serverURL: srv.url });
    const page = await polar.products.list({});
    expect(page.result.items).toEqual([]);
    const products = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(products.status).toBe(200);
    const write = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Nope', organization_id: s.organization.id, prices: [{ amount_type: 'free' }] }),
    });
    expect(write.status).toBe(403);
    const customers = await fetch(`${srv.url}/v1/customers/`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(customers.status).toBe(403);

    // Introspection of the live access token.
    const intro = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(intro).toMatchObject({
      active: true,
      client_id: client.client_id,
      token_type: 'access_token',
      scope: 'openid profile email products:read',
      sub_type: 'user',
      sub: claims.sub,
      aud: client.client_id,
      iss: ISSUER,
    });
    expect(intro.exp! - intro.iat!).toBe(3600);

    // Refresh rotates: a new pair; the old refresh token is spent.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.access_token).toMatch(/^polar_at_u_/);
    expect(refreshed.access_token).not.toBe(tokens.access_token);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.scope).toBe('openid profile email products:read');
    expect((await oidc.tokenIntrospection(config, tokens.refresh_token!)).active).toBe(false);
    expect((await oidc.tokenIntrospection(config, refreshed.refresh_token!)).active).toBe(true);

    // Revocation: the access token stops working on /v1 (401) and introspects inactive.
    await oidc.tokenRevocation(config, refreshed.access_token);
    const afterRevoke = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${refreshed.access_token}` } });
    expect(afterRevoke.status).toBe(401);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    // Revoking the refresh token ends the whole authorization: the first access token too.
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(200);
    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('authenticates with client_secret_basic and gives an organization subject only its own organization', async () => {
    const s = await seller(srv.url);
    const other = await seller(srv.url);
    // The other seller's product: a user token of theirs creates it.
    const otherProduct = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Theirs', prices: [{ amount_type: 'free' }] }),
    });
    expect(otherProduct.status).toBe(201);
    const theirs = await otherProduct.json();

    const reg = await register(srv, s.cookie, {
      client_name: 'Partner app',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'openid products:read products:write',
    });
    expect(reg.status).toBe(200);
    const config = await relyingParty(srv, reg.body, 'basic');
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT,
      scope: 'openid products:read products:write',
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
      sub_type: 'organization',
    });
    // Without choosing an organization the approval is refused at the field.
    const noSub = await consent(srv, s.cookie, url);
    expect(noSub.describe.body.sub_type).toBe('organization');
    expect(noSub.describe.body.organizations.map((o: { id: string }) => o.id)).toEqual([s.organization.id]);
    expect(noSub.status).toBe(422);
    // Someone else's organization cannot be chosen.
    const foreign = await consent(srv, s.cookie, url, { sub: other.organization.id });
    expect(foreign.status).toBe(422);
    const c = await consent(srv, s.cookie, url, { sub: s.organization.id });
    expect(c.status).toBe(200);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(c.body.redirect_to), { pkceCodeVerifier: verifier, expectedState: state });
    expect(tokens.access_token).toMatch(/^polar_at_o_/);
    expect(tokens.claims()!.sub).toBe(s.organization.id);

    const auth = { authorization: `Bearer ${tokens.access_token}`, 'content-type': 'application/json' };
    // Within its organization it writes without naming it, and reads what it wrote.
    const created = await fetch(`${srv.url}/v1/products/`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Ours', prices: [{ amount_type: 'free' }] }) });
    expect(created.status).toBe(201);
    const ours = await created.json();
    expect(ours.organization_id).toBe(s.organization.id);
    const list = await (await fetch(`${srv.url}/v1/products/`, { headers: auth })).json();
    expect(list.items.map((p: { id: string }) => p.id)).toEqual([ours.id]);
    // Another organization's product is not there (404), and naming that organization is refused.
    expect((await fetch(`${srv.url}/v1/products/${theirs.id}`, { headers: auth })).status).toBe(404);
    const cross = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name: 'Sneaky', organization_id: other.organization.id, prices: [{ amount_type: 'free' }] }),
    });
    expect(cross.status).toBe(422);

    const info = await oidc.fetchUserInfo(config, tokens.access_token, s.organization.id);
    expect(info).toMatchObject({ sub: s.organization.id, name: 'Test Organization' });
    const intro = await oidc.tokenIntrospection(config, tokens.access_token);
    expect(intro).toMatchObject({ active: true, sub_type: 'organization', sub: s.organization.id });

    // The approving seller leaves the organization: the token no longer acts for it.
    await srv.deps.orm.em.getConnection().execute('delete from members where organization_id = ?', [s.organization.id]);
    expect((await fetch(`${srv.url}/v1/products/`, { headers: auth })).status).toBe(401);
  });

  it('lists the apps a user authorized and revoking one ends its tokens', async () => {
    const s = await seller(srv.url);
    const reg = await register(srv, s.cookie, { client_name: 'Revocable app', redirect_uris: [REDIRECT], scope: 'openid products:read' });
    const config = await relyingParty(srv, reg.body, 'post');
    const { tokens } = await authorize(config, s.cookie, 'openid products:read');
    const grants = await (await fetch(`${srv.url}/v1/oauth2/grants`, { headers: { cookie: s.cookie } })).json();
    expect(grants.items.map((g: any) => [g.client.client_name, g.sub_type, g.scopes])).toEqual([['Revocable app', 'user', ['openid', 'products:read']]]);
    const del = await fetch(`${srv.url}/v1/oauth2/grants/${grants.items[0].id}`, { method: 'DELETE', headers: { cookie: s.cookie, origin: srv.url } });
    expect(del.status).toBe(204);
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.access_token}` } })).status).toBe(401);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    const after = await (await fetch(`${srv.url}/v1/oauth2/grants`, { headers: { cookie: s.cookie } })).json();
    expect(after.items).toEqual([]);
  });
});
