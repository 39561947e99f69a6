/**
 * Email and password, username sign-in, sessions and the simple routes, driven through the official
 * Better Auth 1.2 client (cookie jar in Node).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session } from '../../api/src/auth/entities.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { PASSWORD, authClient, signedUpUser } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
});
afterAll(async () => {
  await srv?.close();
});

describe('simple routes', () => {
  it('answers GET /ok', async () => {
    const res = await fetch(`${srv.url}/api/auth/ok`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true });
  });

  it('shows an escaped error code and a link home on GET /error', async () => {
    const res = await fetch(`${srv.url}/api/auth/error?error=${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    const html = await res.text();
    expect(html).toContain('<title>Authentication Error</title>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.toContain('<script>alert(1)</script>');
    expect(html).toMatch(/<a href="\/"/);
    const plain = await (await fetch(`${srv.url}/api/auth/error`)).text();
    expect(plain).toContain('Unknown');
  });

  it('answers unknown auth routes with a {code, message} 404', async () => {
    const res = await fetch(`${srv.url}/api/auth/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ code: 'NOT_FOUND', message: 'Not found' });
  });
});

describe('sign-up and sign-in by email', () => {
  it('signs up (email lower-cased), signs in and reads the session', async () => {
    const { client, jar } = authClient(srv.url);
    const email = uniqueEmail('Mixed.Case').replace('mixed', 'Mixed');
    const up = await client.signUp.email({ email, password: PASSWORD, name: 'Ada', image: 'https://img.example/a.png' });
    expect(up.error).toBeNull();
    expect(up.data!.user).toMatchObject({ email: email.toLowerCase(), name: 'Ada', emailVerified: false, image: 'https://img.example/a.png' });
    expect(typeof up.data!.token).toBe('string');
    expect(jar.get('better-auth.session_token')).toBeTruthy();

    const session = await client.getSession();
    expect(session.data!.user.email).toBe(email.toLowerCase());
    expect(session.data!.session.token).toBe(up.data!.token);
    expect(session.data!.session.userId).toBe(up.data!.user.id);

    const other = authClient(srv.url);
    const signIn = await other.client.signIn.email({ email: email.toUpperCase(), password: PASSWORD });
    expect(signIn.error).toBeNull();
    expect(signIn.data).toMatchObject({ redirect: false, user: { email: email.toLowerCase() } });
    expect(signIn.data!.token).not.toBe(up.data!.token);
  });

  it('refuses a taken email, a bad email and passwords outside 8..128', async () => {
    const { email } = await signedUpUser(srv.url);
    const { client } = authClient(srv.url);
    const taken = await client.signUp.email({ email, password: PASSWORD, name: 'X' });
    expect(taken.error).toMatchObject({ status: 422, code: 'USER_ALREADY_EXISTS', message: 'User already exists' });
    const bad = await client.signUp.email({ email: 'not-an-email', password: PASSWORD, name: 'X' });
    expect(bad.error).toMatchObject({ status: 400, code: 'INVALID_EMAIL', message: 'Invalid email' });
    const short = await client.signUp.email({ email: uniqueEmail(), password: 'short', name: 'X' });
    expect(short.error).toMatchObject({ status: 400, code: 'PASSWORD_TOO_SHORT', message: 'Password too short' });
    const long = await client.signUp.email({ email: uniqueEmail(), password: 'x'.repeat(129), name: 'X' });
    expect(long.error).toMatchObject({ status: 400, code: 'PASSWORD_TOO_LONG', message: 'Password too long' });
  });

  it('gives the same 401 for an unknown user, a missing password and a wrong password', async () => {
    const { email } = await signedUpUser(srv.url);
    const { client, raw } = authClient(srv.url);
    const unknown = await client.signIn.email({ email: uniqueEmail('ghost'), password: PASSWORD });
    const wrong = await client.signIn.email({ email, password: 'wrong password!' });
    const missing = await raw('/api/auth/sign-in/email', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    const expected = { status: 401, code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' };
    expect(unknown.error).toMatchObject(expected);
    expect(wrong.error).toMatchObject(expected);
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({ code: expected.code, message: expected.message });
  });

  it('returns redirect and url when a trusted callbackURL is given', async () => {
    const { email } = await signedUpUser(srv.url);
    const { client } = authClient(srv.url);
    const res = await client.signIn.email({ email, password: PASSWORD, callbackURL: '/dashboard/' });
    expect(res.data).toMatchObject({ redirect: true, url: '/dashboard/' });
  });

  it('sets an httpOnly, SameSite=Lax session cookie with a 7-day Max-Age, and a browser-session one without rememberMe', async () => {
    const { email } = await signedUpUser(srv.url);
    const res = await fetch(`${srv.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    const cookies = res.headers.getSetCookie();
    const token = cookies.find((c) => c.startsWith('better-auth.session_token='))!;
    expect(token).toMatch(/; HttpOnly/);
    expect(token).toMatch(/; SameSite=Lax/);
    expect(token).toMatch(/; Path=\//);
    expect(token).toMatch(/Max-Age=604800/);
    expect(token).not.toMatch(/Secure/);
    // The signed value: token, a dot, a 44-character HMAC (URL-encoded).
    const value = decodeURIComponent(token.split(';')[0]!.split('=').slice(1).join('='));
    expect(value.split('.').pop()).toHaveLength(44);
    const cache = cookies.find((c) => c.startsWith('better-auth.session_data='))!;
    expect(cache).toMatch(/Max-Age=60/);
    expect(cache).toMatch(/; HttpOnly/);
    expect(cache.split(';')[0]!.length).toBeLessThanOrEqual(4093 + 'better-auth.session_data='.length);

    const short = await fetch(`${srv.url}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD, rememberMe: false }),
    });
    const shortToken = short.headers.getSetCookie().find((c) => c.startsWith('better-auth.session_token='))!;
    expect(shortToken).not.toMatch(/Max-Age/);
  });

  it('marks cookies Secure (and __Secure- prefixed) when PUBLIC_URL is HTTPS', async () => {
    const secure = await startTestServer({
      worker: false,
      env: { RATE_LIMIT_ENABLED: 'false', PUBLIC_URL: 'https://billing.example.com' },
    });
    try {
      const res = await fetch(`${secure.url}/api/auth/sign-up/email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: uniqueEmail(), password: PASSWORD, name: 'S' }),
      });
      expect(res.status).toBe(200);
      const token = res.headers.getSetCookie().find((c) => c.startsWith('__Secure-better-auth.session_token='));
      expect(token).toBeDefined();
      expect(token).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });
});

describe('username', () => {
  it('signs up with a username (stored lower-case, displayUsername kept) and signs in with it', async () => {
    const name = `Ada_${Date.now().toString(36)}`;
    const { email, user } = await signedUpUser(srv.url, { username: name });
    expect(user).toMatchObject({ username: name.toLowerCase(), displayUsername: name });
    const { client } = authClient(srv.url);
    const res = await client.signIn.username({ username: name.toUpperCase(), password: PASSWORD });
    expect(res.error).toBeNull();
    expect(res.data!.user).toMatchObject({ email, username: name.toLowerCase() });
    expect(typeof res.data!.token).toBe('string');
    const session = await client.getSession();
    expect(session.data!.user.email).toBe(email);
  });

  it('refuses bad, short, long and taken usernames and wrong credentials', async () => {
    const name = `bob_${Date.now().toString(36)}`;
    await signedUpUser(srv.url, { username: name });
    const { client } = authClient(srv.url);
    const signUp = (username: string) => client.signUp.email({ email: uniqueEmail(), password: PASSWORD, name: 'B', username });
    expect((await signUp('ab')).error).toMatchObject({ status: 422, message: 'username is too short' });
    expect((await signUp('a'.repeat(31))).error).toMatchObject({ status: 422, message: 'username is too long' });
    expect((await signUp('no spaces!')).error).toMatchObject({ status: 422, message: 'username is invalid' });
    expect((await signUp(name.toUpperCase())).error).toMatchObject({
      status: 422,
      code: 'USERNAME_IS_ALREADY_TAKEN_PLEASE_TRY_ANOTHER',
      message: 'username is already taken. please try another.',
    });
    const wrong = await client.signIn.username({ username: name, password: 'not the password' });
    const unknown = await client.signIn.username({ username: `ghost_${Date.now().toString(36)}`, password: PASSWORD });
    for (const r of [wrong, unknown]) {
      expect(r.error).toMatchObject({ status: 401, code: 'INVALID_USERNAME_OR_PASSWORD', message: 'invalid username or password' });
    }
  });
});

describe('sessions', () => {
  it('serves get-session from the cookie cache, or from the database when asked', async () => {
    const a = await signedUpUser(srv.url);
    const em = srv.deps.orm.em.fork();
    // Change the name behind the cache's back: the cache still answers, the database does not.
    await em.getConnection().execute('update users set name = ? where id = ?', ['Renamed', a.user.id]);
    const cached = await a.client.getSession();
    expect(cached.data!.user.name).toBe('Test User');
    const fresh = await a.client.getSession({ query: { disableCookieCache: true } });
    expect(fresh.data!.user.name).toBe('Renamed');
    // Reading from the database refreshed the cache.
    expect((await a.client.getSession()).data!.user.name).toBe('Renamed');
  });

  it('does not trust a cache cookie of another session', async () => {
    const a = await signedUpUser(srv.url);
    const b = await signedUpUser(srv.url);
    // b's token with a's cache: the cache is ignored.
    a.jar.cookies.set('better-auth.session_token', b.jar.get('better-auth.session_token')!);
    const s = await a.client.getSession();
    expect(s.data!.user.id).toBe(b.user.id);
  });

  it('returns null and clears cookies for an expired session, and deletes it', async () => {
    const a = await signedUpUser(srv.url);
    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Session, { user: a.user.id }, { expiresAt: new Date(Date.now() - 1000) });
    const s = await a.client.getSession({ query: { disableCookieCache: true } });
    expect(s.data).toBeNull();
    expect(a.jar.get('better-auth.session_token')).toBeUndefined();
    expect(await em.count(Session, { user: a.user.id })).toBe(0);
  });

  it('extends a session used a day after its last refresh, but not with disableRefresh', async () => {
    const a = await signedUpUser(srv.url);
    const em = srv.deps.orm.em.fork();
    const dayAgo = Date.now() - 25 * 3600 * 1000;
    const oldExpiry = new Date(dayAgo + 7 * 24 * 3600 * 1000);
    await em.nativeUpdate(Session, { user: a.user.id }, { expiresAt: oldExpiry, updatedAt: new Date(dayAgo) });
    const noRefresh = await a.client.getSession({ query: { disableCookieCache: true, disableRefresh: true } });
    expect(new Date(noRefresh.data!.session.expiresAt).getTime()).toBe(oldExpiry.getTime());
    // Refreshed during this call: updated then, and expiring 7 days from then.
    const before = Date.now();
    const refreshed = await a.client.getSession({ query: { disableCookieCache: true } });
    const after = Date.now();
    const updatedAt = new Date(refreshed.data!.session.updatedAt).getTime();
    expect(updatedAt).toBeGreaterThanOrEqual(before);
    expect(updatedAt).toBeLessThanOrEqual(after);
    expect(new Date(refreshed.data!.session.expiresAt).getTime()).toBeGreaterThanOrEqual(before + 7 * 24 * 3600 * 1000);
    expect(new Date(refreshed.data!.session.expiresAt).getTime()).toBeLessThanOrEqual(after + 7 * 24 * 3600 * 1000);
  });

  it('lists sessions, revokes one, the others, and all', async () => {
    const a = await signedUpUser(srv.url);
    const second = authClient(srv.url);
    const third = authClient(srv.url);
    await second.client.signIn.email({ email: a.email, password: PASSWORD });
    await third.client.signIn.email({ email: a.email, password: PASSWORD });

    const list = await a.client.listSessions();
    expect(list.data).toHaveLength(3);
    const mine = list.data!.find((s) => s.token === a.token);
    expect(mine).toBeDefined();

    // Revoke the second session by its token.
    const secondToken = (await second.client.getSession()).data!.session.token;
    const revoke = await a.client.revokeSession({ token: secondToken });
    expect(revoke.data).toEqual({ status: true });
    expect((await second.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();

    const notFound = await a.client.revokeSession({ token: 'no-such-token' });
    expect(notFound.error).toMatchObject({ status: 400, message: 'Session not found' });

    expect((await a.client.revokeOtherSessions()).data).toEqual({ status: true });
    expect((await third.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data).not.toBeNull();
    expect((await a.client.listSessions()).data).toHaveLength(1);

    const fourth = authClient(srv.url);
    await fourth.client.signIn.email({ email: a.email, password: PASSWORD });
    const handles = (await a.client.listSessions()).data!;
    const other = handles.find((s) => s.token !== a.token)!;
    expect((await a.client.revokeSession({ token: other.token })).data).toEqual({ status: true });
    expect((await fourth.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();

    expect((await a.client.revokeSessions()).data).toEqual({ status: true });
    expect((await a.client.getSession()).data).toBeNull();
  });

  it('signs out: the session is gone and the cookies cleared; without a session it is a 400', async () => {
    const a = await signedUpUser(srv.url);
    const out = await a.client.signOut();
    expect(out.data).toEqual({ success: true });
    expect(a.jar.get('better-auth.session_token')).toBeUndefined();
    expect(a.jar.get('better-auth.session_data')).toBeUndefined();
    expect(await srv.deps.orm.em.fork().count(Session, { user: a.user.id })).toBe(0);
    const again = await a.client.signOut();
    expect(again.error).toMatchObject({ status: 400, message: 'Failed to get session' });
  });

  it('accepts the session token as a bearer', async () => {
    const a = await signedUpUser(srv.url);
    const res = await fetch(`${srv.url}/api/auth/get-session`, { headers: { authorization: `Bearer ${a.token}` } });
    expect((await res.json()).user.id).toBe(a.user.id);
    const bad = await fetch(`${srv.url}/api/auth/get-session`, { headers: { authorization: 'Bearer nope' } });
    expect(await bad.json()).toBeNull();
  });

  it('requires a session on session routes (401 Not authenticated)', async () => {
    const { client } = authClient(srv.url);
    for (const r of [
      await client.listSessions(),
      await client.revokeSession({ token: 'x' }),
      await client.revokeSessions(),
      await client.revokeOtherSessions(),
      await client.changePassword({ currentPassword: PASSWORD, newPassword: 'another password' }),
      await client.changeEmail({ newEmail: uniqueEmail() }),
      await client.deleteUser({}),
      await client.listAccounts(),
      await client.updateUser({ name: 'x' }),
    ]) {
      expect(r.error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
    }
    const setPassword = await fetch(`${srv.url}/api/auth/set-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ newPassword: 'another password' }),
    });
    expect(setPassword.status).toBe(401);
  });
});
