/**
 * Social sign-in end to end against a real OpenID provider (oidc-provider, in process): sign-up and
 * sign-in with the redirect flow, account linking rules, link/unlink, refresh-token, id-token sign-in,
 * one-tap, and every way a callback can go wrong (state not this browser's, reused state and code,
 * provider errors, PKCE verifier not matching the challenge, untrusted redirect targets).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { authClient, PASSWORD, signedUpUser } from '../auth/helpers.ts';
import { errorOf, oidcAccount, PUBLIC_URL, socialRoundTrip, throughProvider, toCallback } from './helpers.ts';
import { startOidcServer, type OidcServer } from './oidc-server.ts';

let server: TestServer;
let op: OidcServer;

beforeAll(async () => {
  op = await startOidcServer([`${PUBLIC_URL}/api/auth/callback/google`]);
  server = await startTestServer({
    worker: false,
    env: {
      PUBLIC_URL,
      GOOGLE_CLIENT_ID: op.clientId,
      GOOGLE_CLIENT_SECRET: op.clientSecret,
      SOCIAL_PROVIDER_ENDPOINTS: JSON.stringify({ google: op.endpoints }),
    },
  });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await op?.close();
});

async function sessionOf(c: ReturnType<typeof authClient>) {
  const res = await c.client.getSession({ query: { disableCookieCache: true } });
  return res.data;
}

async function accountRow(userId: string, providerId: string) {
  const rows = await server.deps.orm.em
    .fork()
    .getConnection()
    .execute<{ access_token: string | null; refresh_token: string | null; id_token: string | null; account_id: string }[]>(
      'select access_token, refresh_token, id_token, account_id from accounts where user_id = ? and provider_id = ?',
      [userId, providerId],
    );
  return rows;
}

describe('social sign-in (redirect flow)', () => {
  it('signs a new user up: lands on newUserCallbackURL with a session holding the provider profile', async () => {
    const c = authClient(server.url);
    const who = oidcAccount({ picture: 'https://img.example.com/a.png' });
    const { started, status, location } = await socialRoundTrip(c, server.url, op, who, {
      callbackURL: '/dashboard',
      newUserCallbackURL: '/welcome',
    });
    expect(started.redirect).toBe(true);
    expect(status).toBe(302);
    expect(location?.pathname).toBe('/welcome');
    expect(errorOf(location)).toBeNull();
    const s = await sessionOf(c);
    expect(s?.user).toMatchObject({ email: who.email, name: who.name, image: who.picture, emailVerified: true });

    const list = await c.client.listAccounts();
    expect(list.data?.map((a) => [a.provider, a.accountId])).toEqual([['google', who.sub]]);

    // The second time the same person comes back: an existing user, so the plain callbackURL.
    const again = authClient(server.url);
    const second = await socialRoundTrip(again, server.url, op, who, { callbackURL: '/dashboard', newUserCallbackURL: '/welcome' });
    expect(second.location?.pathname).toBe('/dashboard');
    expect((await sessionOf(again))?.user.id).toBe(s!.user.id);
  });

  it('stores provider tokens sealed, never as issued', async () => {
    const c = authClient(server.url);
    const who = oidcAccount();
    await socialRoundTrip(c, server.url, op, who, { callbackURL: '/dashboard', scopes: ['offline_access'] });
    const s = await sessionOf(c);
    const tokens = await c.client.getAccessToken({ providerId: 'google' });
    expect(tokens.error).toBeNull();
    const accessToken = tokens.data!.accessToken!;
    expect(accessToken.length).toBeGreaterThan(10);
    const [row] = await accountRow(s!.user.id, 'google');
    expect(row!.account_id).toBe(who.sub);
    for (const v of [row!.access_token, row!.refresh_token, row!.id_token]) {
      expect(v).toMatch(/^v1\./);
      expect(v).not.toContain(accessToken);
    }
  });

  it('asks the provider for PKCE S256 and a 32-character state; a challenge the verifier does not match gets no session', async () => {
    const c = authClient(server.url);
    const res = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard', loginHint: 'someone@example.com', disableRedirect: true });
    expect(res.error).toBeNull();
    expect(res.data!.redirect).toBe(false);
    const url = new URL(res.data!.url!);
    expect(`${url.origin}${url.pathname}`).toBe(op.endpoints.authorization);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toMatch(/^[A-Za-z0-9]{32}$/);
    expect(url.searchParams.get('login_hint')).toBe('someone@example.com');
    expect(url.searchParams.get('redirect_uri')).toBe(`${PUBLIC_URL}/api/auth/callback/google`);
    expect(url.searchParams.get('scope')!.split(' ').sort()).toEqual(['email', 'openid', 'profile']);

    // Someone swaps the challenge for one of their own verifier: the provider issues a code, but our
    // verifier does not match it, so the exchange fails.
    const theirs = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
    url.searchParams.set('code_challenge', theirs);
    op.nextLogin.account = oidcAccount();
    const back = await throughProvider(op, url.href);
    expect(back.searchParams.get('code')).toBeTruthy();
    const { location } = await toCallback(c, server.url, back);
    expect(location?.pathname).toBe('/api/auth/error');
    expect(errorOf(location)).toBe('invalid_code');
    expect(await sessionOf(c)).toBeNull();
  });

  it('refuses a callback in a browser that did not start the flow; the right browser still finishes', async () => {
    const victim = authClient(server.url);
    const res = await victim.client.signIn.social({ provider: 'google', callbackURL: '/dashboard' });
    const who = oidcAccount();
    op.nextLogin.account = who;
    const back = await throughProvider(op, res.data!.url!);

    // The attacker's browser (no state cookie, or its own) replays the victim's callback URL.
    const attacker = authClient(server.url);
    const own = await attacker.client.signIn.social({ provider: 'google', callbackURL: '/dashboard' });
    expect(own.error).toBeNull();
    const replay = await toCallback(attacker, server.url, back);
    expect(errorOf(replay.location)).toBe('please_restart_the_process');
    expect(await sessionOf(attacker)).toBeNull();

    const done = await toCallback(victim, server.url, back);
    expect(done.location?.pathname).toBe('/dashboard');
    expect((await sessionOf(victim))?.user.email).toBe(who.email);
  });

  it('uses a state once and a code once', async () => {
    const c = authClient(server.url);
    const who = oidcAccount();
    const first = await socialRoundTrip(c, server.url, op, who, { callbackURL: '/dashboard' });
    expect(first.location?.pathname).toBe('/dashboard');

    // The same callback again: the state is used up.
    const again = await toCallback(c, server.url, first.back);
    expect(errorOf(again.location)).toBe('please_restart_the_process');

    // The old code with a fresh state of this browser: the provider refuses the used code.
    const fresh = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard', errorCallbackURL: '/oops' });
    const state = new URL(fresh.data!.url!).searchParams.get('state')!;
    const reused = new URL(first.back);
    reused.searchParams.set('state', state);
    const res = await toCallback(c, server.url, reused);
    expect(res.location?.pathname).toBe('/oops');
    expect(errorOf(res.location)).toBe('invalid_code');
  });

  it('sends provider errors, a missing state and a missing code to the error pages', async () => {
    const c = authClient(server.url);
    // The user cancels at the provider: the flow's error page is told why.
    const denied = await socialRoundTrip(c, server.url, op, null, { callbackURL: '/dashboard', errorCallbackURL: '/oops' });
    expect(denied.location?.pathname).toBe('/oops');
    expect(errorOf(denied.location)).toBe('access_denied');
    expect(denied.location?.searchParams.get('error_description')).toBe('The user cancelled');
    // Without a state of this browser, the provider's error goes to the default error page.
    const stray = await c.raw(`${server.url}/api/auth/callback/google?error=access_denied&state=unknown`);
    expect(new URL(stray.headers.get('location')!).pathname).toBe('/api/auth/error');

    const noState = await c.raw(`${server.url}/api/auth/callback/google?code=abc`);
    expect(noState.status).toBe(302);
    expect(errorOf(new URL(noState.headers.get('location')!))).toBe('state_not_found');

    const fresh = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard', errorCallbackURL: '/oops?from=google' });
    const state = new URL(fresh.data!.url!).searchParams.get('state')!;
    const noCode = await c.raw(`${server.url}/api/auth/callback/google?state=${state}`);
    const loc = new URL(noCode.headers.get('location')!);
    expect(loc.pathname).toBe('/oops');
    expect(loc.searchParams.get('from')).toBe('google');
    expect(errorOf(loc)).toBe('no_code');

    const page = await c.raw(`${server.url}/api/auth/error?error=state_not_found`);
    expect(await page.text()).toContain('state_not_found');
  });

  it('takes the form-post callback (Apple\'s response_mode) by continuing it as a GET on our origin', async () => {
    const c = authClient(server.url);
    const res = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard' });
    const who = oidcAccount();
    op.nextLogin.account = who;
    const back = await throughProvider(op, res.data!.url!);
    // A cross-site form post: the browser sends none of our SameSite=Lax cookies with it.
    const posted = await fetch(`${server.url}/api/auth/callback/google`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://appleid.apple.com' },
      body: back.searchParams.toString(),
    });
    expect(posted.status).toBe(302);
    const get = new URL(posted.headers.get('location')!);
    expect(`${get.origin}${get.pathname}`).toBe(`${PUBLIC_URL}/api/auth/callback/google`);
    expect(get.searchParams.get('code')).toBe(back.searchParams.get('code'));
    const done = await toCallback(c, server.url, get);
    expect(done.location?.pathname).toBe('/dashboard');
    expect((await sessionOf(c))?.user.email).toBe(who.email);
  });

  it('sends a banned user to the error page with the ban message, without a session', async () => {
    const who = oidcAccount();
    const c = authClient(server.url);
    await socialRoundTrip(c, server.url, op, who, { callbackURL: '/dashboard' });
    await server.deps.orm.em.fork().getConnection().execute('update users set banned = true where email = ?', [who.email]);
    const other = authClient(server.url);
    const res = await socialRoundTrip(other, server.url, op, who, { callbackURL: '/dashboard', errorCallbackURL: '/oops' });
    expect(res.location?.pathname).toBe('/api/auth/error');
    expect(errorOf(res.location)).toBe('banned');
    expect(res.location?.searchParams.get('error_description')).toMatch(/banned/);
    expect(await sessionOf(other)).toBeNull();
  });

  it('refuses a state started for another provider', async () => {
    const c = authClient(server.url);
    const res = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard', errorCallbackURL: '/oops' });
    op.nextLogin.account = oidcAccount();
    const back = await throughProvider(op, res.data!.url!);
    const elsewhere = await c.raw(`${server.url}/api/auth/callback/github${back.search}`);
    const loc = new URL(elsewhere.headers.get('location')!);
    expect(loc.pathname).toBe('/oops');
    expect(errorOf(loc)).toBe('oauth_provider_not_found');
    expect(await sessionOf(c)).toBeNull();
  });

  it('checks every redirect target against the trusted origins', async () => {
    const c = authClient(server.url);
    for (const field of ['callbackURL', 'errorCallbackURL', 'newUserCallbackURL'] as const) {
      const res = await c.client.signIn.social({ provider: 'google', callbackURL: '/dashboard', [field]: 'https://evil.example.com/steal' });
      expect(res.error?.status).toBe(403);
      expect(res.error?.message).toBe(`Invalid ${field}`);
    }
    const link = await signedUpUser(server.url);
    const res = await link.client.linkSocial({ provider: 'google', callbackURL: '//evil.example.com' });
    expect(res.error?.status).toBe(403);
  });

  it('answers Provider not found for a provider without credentials, and 400 for one it does not know', async () => {
    const c = authClient(server.url);
    const gh = await c.client.signIn.social({ provider: 'github', callbackURL: '/' });
    expect(gh.error?.status).toBe(404);
    expect(gh.error?.message).toBe('Provider not found');
    const res = await c.raw(`${server.url}/api/auth/sign-in/social`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'myspace' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    const list = await (await fetch(`${server.url}/api/auth/social-providers`)).json();
    expect(list).toEqual([{ id: 'google', name: 'Google' }]);
  });
});

describe('account linking', () => {
  it('does not attach an unverified provider address to an existing user; a verified one signs that user in', async () => {
    const existing = await signedUpUser(server.url);
    const c = authClient(server.url);
    const unverified = oidcAccount({ email: existing.email, email_verified: false });
    const refused = await socialRoundTrip(c, server.url, op, unverified, { callbackURL: '/dashboard', errorCallbackURL: '/oops' });
    expect(refused.location?.pathname).toBe('/oops');
    expect(errorOf(refused.location)).toBe('account_not_linked');
    expect(await sessionOf(c)).toBeNull();

    const verified = oidcAccount({ email: existing.email, email_verified: true });
    const ok = await socialRoundTrip(c, server.url, op, verified, { callbackURL: '/dashboard' });
    expect(ok.location?.pathname).toBe('/dashboard');
    expect((await sessionOf(c))?.user.id).toBe(existing.user.id);
    const list = await existing.client.listAccounts();
    expect(list.data?.map((a) => a.provider).sort()).toEqual(['credential', 'google']);
  });

  it('links a provider account to the signed-in user, unlinks it, and refuses to unlink the last one', async () => {
    const me = await signedUpUser(server.url);
    const who = oidcAccount({ email: uniqueEmail('other') });
    const linked = await socialRoundTrip(me, server.url, op, who, { callbackURL: '/account' }, '/api/auth/link-social');
    expect(linked.started.redirect).toBe(true);
    expect(linked.location?.pathname).toBe('/account');
    expect(errorOf(linked.location)).toBeNull();
    let list = await me.client.listAccounts();
    expect(list.data?.map((a) => [a.provider, a.accountId]).sort()).toEqual([
      ['credential', me.user.id],
      ['google', who.sub],
    ]);
    // The provider account now signs this user in.
    const other = authClient(server.url);
    await socialRoundTrip(other, server.url, op, who, { callbackURL: '/dashboard' });
    expect((await sessionOf(other))?.user.id).toBe(me.user.id);

    // Someone else cannot link the same provider account.
    const thief = await signedUpUser(server.url);
    const stolen = await socialRoundTrip(thief, server.url, op, who, { callbackURL: '/account', errorCallbackURL: '/oops' }, '/api/auth/link-social');
    expect(errorOf(stolen.location)).toBe('account_already_linked_to_different_user');

    const missing = await me.client.unlinkAccount({ providerId: 'github' });
    expect(missing.error?.status).toBe(400);
    expect(missing.error?.message).toBe('Account not found');

    const unlinked = await me.client.unlinkAccount({ providerId: 'google' });
    expect(unlinked.data).toEqual({ status: true });
    list = await me.client.listAccounts();
    expect(list.data?.map((a) => a.provider)).toEqual(['credential']);

    const last = await me.client.unlinkAccount({ providerId: 'credential' });
    expect(last.error?.status).toBe(400);
    expect(last.error?.message).toBe("You can't unlink your last account");
    expect((await me.client.signIn.email({ email: me.email, password: PASSWORD })).error).toBeNull();
  });

  it('refuses to link an unverified provider address', async () => {
    const me = await signedUpUser(server.url);
    const who = oidcAccount({ email_verified: false });
    const res = await socialRoundTrip(me, server.url, op, who, { callbackURL: '/account', errorCallbackURL: '/oops' }, '/api/auth/link-social');
    expect(errorOf(res.location)).toBe('unable_to_link_account');
    const list = await me.client.listAccounts();
    expect(list.data?.map((a) => a.provider)).toEqual(['credential']);
  });
});

describe('provider tokens', () => {
  it('refresh-token trades the stored refresh token for a new access token the provider accepts', async () => {
    const c = authClient(server.url);
    await socialRoundTrip(c, server.url, op, oidcAccount(), { callbackURL: '/dashboard', scopes: ['offline_access'] });
    const before = (await c.client.getAccessToken({ providerId: 'google' })).data!.accessToken!;
    const res = await c.client.refreshToken({ providerId: 'google' });
    expect(res.error).toBeNull();
    const fresh = res.data as { accessToken: string; refreshToken: string; tokenType: string; idToken: string };
    expect(fresh.accessToken).not.toBe(before);
    expect(fresh.tokenType.toLowerCase()).toBe('bearer');
    const me = await fetch(op.endpoints.userinfo, { headers: { authorization: `Bearer ${fresh.accessToken}` } });
    expect(me.status).toBe(200);
    // The stored token is the new one.
    expect((await c.client.getAccessToken({ providerId: 'google' })).data!.accessToken).toBe(fresh.accessToken);

    const anonymous = await authClient(server.url).client.refreshToken({ providerId: 'google' });
    expect(anonymous.error?.status).toBe(401);
  });

  it('refresh-token without a stored refresh token says the provider cannot refresh', async () => {
    const c = authClient(server.url);
    await socialRoundTrip(c, server.url, op, oidcAccount(), { callbackURL: '/dashboard' });
    // This provider hands out refresh tokens always; an account without one is what other providers leave.
    const s = await sessionOf(c);
    await server.deps.orm.em.fork().getConnection().execute('update accounts set refresh_token = null where user_id = ?', [s!.user.id]);
    const res = await c.client.refreshToken({ providerId: 'google' });
    expect(res.error?.status).toBe(400);
    expect(res.error?.message).toBe('Provider google does not support token refreshing.');
  });

  it('signs in with an id token the client holds, and refuses a forged one', async () => {
    const c = authClient(server.url);
    const who = oidcAccount();
    await socialRoundTrip(c, server.url, op, who, { callbackURL: '/dashboard' });
    const idToken = (await c.client.getAccessToken({ providerId: 'google' })).data!.idToken!;

    const phone = authClient(server.url);
    const res = await phone.client.signIn.social({ provider: 'google', idToken: { token: idToken } });
    expect(res.error).toBeNull();
    expect(res.data).toMatchObject({ redirect: false, user: { email: who.email } });
    expect((await sessionOf(phone))?.user.email).toBe(who.email);

    const forged = `${idToken.split('.').slice(0, 2).join('.')}.${randomBytes(256).toString('base64url')}`;
    const bad = await authClient(server.url).client.signIn.social({ provider: 'google', idToken: { token: forged } });
    expect(bad.error?.status).toBe(401);
    expect(bad.error?.message).toBe('invalid token');
  });
});

describe('one-tap', () => {
  it('signs in with a Google id token verified against the key set, and refuses other audiences', async () => {
    const email = uniqueEmail('onetap');
    const token = await op.mintIdToken({ sub: `g-${randomBytes(4).toString('hex')}`, email, email_verified: true, name: 'One Tap' });
    const c = authClient(server.url);
    const res = await c.raw(`${server.url}/api/auth/one-tap/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idToken: token }),
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.user).toMatchObject({ email, name: 'One Tap', emailVerified: true });
    expect((await sessionOf(c))?.user.email).toBe(email);

    const other = await op.mintIdToken({ sub: 'g-x', email: uniqueEmail('onetap') }, { audience: 'someone-else' });
    const refused = await authClient(server.url).raw(`${server.url}/api/auth/one-tap/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ idToken: other }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ message: 'invalid id token' });
  });
});

describe('sign-up and linking options', () => {
  it('with implicit sign-up off, creates users only on requestSignUp; a trusted provider links unverified addresses', async () => {
    const strict = await startTestServer({
      worker: false,
      env: {
        PUBLIC_URL,
        GOOGLE_CLIENT_ID: op.clientId,
        GOOGLE_CLIENT_SECRET: op.clientSecret,
        SOCIAL_PROVIDER_ENDPOINTS: JSON.stringify({ google: op.endpoints }),
        SOCIAL_DISABLE_IMPLICIT_SIGN_UP: 'true',
        SOCIAL_TRUSTED_PROVIDERS: 'google',
      },
    });
    try {
      const who = oidcAccount();
      const c = authClient(strict.url);
      const refused = await socialRoundTrip(c, strict.url, op, who, { callbackURL: '/dashboard', errorCallbackURL: '/oops' });
      expect(refused.location?.pathname).toBe('/oops');
      expect(errorOf(refused.location)).toBe('signup_disabled');
      expect(await c.client.getSession({ query: { disableCookieCache: true } }).then((r) => r.data)).toBeNull();

      const asked = await socialRoundTrip(c, strict.url, op, who, { callbackURL: '/dashboard', newUserCallbackURL: '/welcome', requestSignUp: true });
      expect(asked.location?.pathname).toBe('/welcome');
      expect((await c.client.getSession({ query: { disableCookieCache: true } })).data?.user.email).toBe(who.email);

      // Google is trusted here: an unverified provider address still reaches the existing user.
      const existing = await signedUpUser(strict.url);
      const other = authClient(strict.url);
      const linked = await socialRoundTrip(other, strict.url, op, oidcAccount({ email: existing.email, email_verified: false }), { callbackURL: '/dashboard' });
      expect(linked.location?.pathname).toBe('/dashboard');
      expect((await other.client.getSession({ query: { disableCookieCache: true } })).data?.user.id).toBe(existing.user.id);
    } finally {
      await strict.close();
    }
  }, 60_000);
});
