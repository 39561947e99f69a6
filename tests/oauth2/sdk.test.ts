/**
 * Polar's official SDK (@polar-sh/sdk 0.29.3) against the OAuth2 endpoints: client registration and
 * management with a user's session token, the code exchange (form-encoded, secret in the body),
 * userinfo, introspection and revocation all parse with the SDK's own schemas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { uniqueEmail, type TestServer } from '../harness.ts';
import { consent, ISSUER, startOAuthServer } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startOAuthServer();
});
afterAll(async () => {
  await srv?.close();
});

describe('OAuth2 with @polar-sh/sdk', () => {
  it('registers, lists, updates and deletes a client, exchanges a code, and reads userinfo and introspection', async () => {
    const email = uniqueEmail('dev');
    const signUp = await fetch(`${srv.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'correct horse battery', name: 'Dana Developer' }),
    });
    expect(signUp.status).toBe(200);
    const { token: sessionToken, user } = (await signUp.json()) as { token: string; user: { id: string } };
    const cookie = signUp.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const asUser = new Polar({ accessToken: sessionToken, serverURL: srv.url });

    const redirectUri = 'https://app.example.com/callback';
    // The SDK hands these answers back as the API's JSON (snake_case), unparsed.
    const created = await asUser.oauth2.clients.create({
      clientName: 'SDK app',
      redirectUris: [redirectUri],
      scope: 'openid email products:read',
    }) as Record<string, string>;
    expect(created.client_id).toMatch(/^polar_ci_/);
    expect(created.client_secret).toMatch(/^polar_cs_/);
    expect(created.token_endpoint_auth_method).toBe('client_secret_post');
    const clientId = String(created.client_id);
    const clientSecret = String(created.client_secret);
    const listed = await asUser.oauth2.clients.list({});
    expect(listed.result.items.map((c) => c.clientId)).toEqual([clientId]);
    const updated = await asUser.oauth2.clients.update({
      clientId: clientId,
      oAuth2ClientConfigurationUpdate: { clientId: clientId, clientName: 'SDK app 2', redirectUris: [redirectUri], scope: 'openid email products:read' },
    });
    expect(updated).toMatchObject({ client_name: 'SDK app 2', client_secret: '' });

    // A confidential client without PKCE, as the SDK's token request makes it.
    const url = new URL(`${ISSUER}/dashboard/oauth2/authorize`);
    for (const [k, v] of Object.entries({ client_id: clientId, response_type: 'code', redirect_uri: redirectUri, scope: 'openid email products:read', state: 's1' })) {
      url.searchParams.set(k, v);
    }
    const c = await consent(srv, cookie, url);
    expect(c.status).toBe(200);
    const code = new URL(c.body.redirect_to).searchParams.get('code')!;
    const anonymous = new Polar({ serverURL: srv.url });
    const tokens = await anonymous.oauth2.token({ grantType: 'authorization_code', clientId: clientId, clientSecret: clientSecret, code, redirectUri });
    expect(tokens.accessToken).toMatch(/^polar_at_u_/);
    expect(tokens.refreshToken).toMatch(/^polar_rt_u_/);
    expect(tokens.idToken.split('.')).toHaveLength(3);
    expect(tokens.scope).toBe('openid email products:read');

    const asApp = new Polar({ accessToken: tokens.accessToken, serverURL: srv.url });
    const info = await asApp.oauth2.userinfo();
    // The SDK's userinfo union tries the organization shape first, which keeps only sub and name.
    expect(info.sub).toBe(user.id);
    const raw = await fetch(`${srv.url}/v1/oauth2/userinfo`, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
    expect(await raw.json()).toEqual({ sub: user.id, email, email_verified: false });
    const intro = await anonymous.oauth2.introspect({ token: tokens.accessToken, clientId: clientId, clientSecret: clientSecret });
    expect(intro).toMatchObject({ active: true, clientId: clientId, tokenType: 'access_token', subType: 'user', iss: ISSUER, aud: clientId });
    await anonymous.oauth2.revoke({ token: tokens.accessToken, clientId: clientId, clientSecret: clientSecret });
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${tokens.accessToken}` } })).status).toBe(401);

    // Deleting the client ends its tokens and its registration.
    const refreshed = await anonymous.oauth2.token({ grantType: 'refresh_token', clientId: clientId, clientSecret: clientSecret, refreshToken: tokens.refreshToken! });
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${refreshed.accessToken}` } })).status).toBe(200);
    await asUser.oauth2.clients.delete({ clientId: clientId });
    expect((await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${refreshed.accessToken}` } })).status).toBe(401);
    const gone = await fetch(`${srv.url}/v1/oauth2/register/${clientId}`, { headers: { authorization: `Bearer ${sessionToken}` } });
    expect(gone.status).toBe(404);
  });
});
