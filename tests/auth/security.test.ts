/**
 * Security properties of the auth service: no user enumeration, no session fixation, trusted origins
 * for redirects and cookie-bearing POSTs, and rate limiting shared by several API replicas.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { PASSWORD, authClient, signedUpUser } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    worker: false,
    env: { RATE_LIMIT_ENABLED: 'false', TRUSTED_ORIGINS: 'https://app.example.com,https://*.tenants.example.com' },
  });
});
afterAll(async () => {
  await srv?.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${srv.url}/api/auth${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    redirect: 'manual',
  });

describe('user enumeration', () => {
  it('answers sign-in for unknown users, missing and wrong passwords identically', async () => {
    const { email } = await signedUpUser(srv.url);
    const answers = await Promise.all([
      post('/sign-in/email', { email: uniqueEmail('nobody'), password: PASSWORD }),
      post('/sign-in/email', { email, password: 'definitely wrong' }),
      post('/sign-in/email', { email, password: '' }),
      post('/sign-in/email', { email }),
    ]);
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: await r.json() })));
    for (const b of bodies) {
      expect(b).toEqual({ status: 401, body: { code: 'INVALID_EMAIL_OR_PASSWORD', message: 'Invalid email or password' } });
    }
  });

  it('answers password-reset and verification requests the same for known and unknown addresses', async () => {
    const { email } = await signedUpUser(srv.url);
    for (const path of ['/forget-password', '/request-password-reset', '/send-verification-email']) {
      const known = await post(path, { email });
      const unknown = await post(path, { email: uniqueEmail('nobody') });
      expect(known.status).toBe(200);
      expect(unknown.status).toBe(200);
      expect(await known.json()).toEqual(await unknown.json());
    }
  });
});

describe('session fixation', () => {
  it('issues a new token on sign-in and never adopts the session the browser already had', async () => {
    const attacker = await signedUpUser(srv.url);
    const victim = await signedUpUser(srv.url);
    // The victim's browser carries the attacker's session cookie when signing in.
    const browser = authClient(srv.url);
    browser.jar.cookies.set('better-auth.session_token', attacker.jar.get('better-auth.session_token')!);
    const res = await browser.client.signIn.email({ email: victim.email, password: PASSWORD });
    expect(res.data!.token).not.toBe(attacker.token);
    expect(browser.jar.get('better-auth.session_token')).not.toBe(attacker.jar.get('better-auth.session_token'));
    expect((await browser.client.getSession()).data!.user.id).toBe(victim.user.id);
    // The attacker's token still means the attacker, never the victim.
    const mine = await attacker.client.getSession({ query: { disableCookieCache: true } });
    expect(mine.data!.user.id).toBe(attacker.user.id);
  });

  it('ignores a forged (unsigned or wrongly signed) session cookie', async () => {
    const a = await signedUpUser(srv.url);
    const forged = authClient(srv.url);
    forged.jar.cookies.set('better-auth.session_token', encodeURIComponent(`${a.token}.AAAA`));
    expect((await forged.client.getSession()).data).toBeNull();
    forged.jar.cookies.set('better-auth.session_token', a.token);
    expect((await forged.client.getSession()).data).toBeNull();
  });
});

describe('trusted origins', () => {
  it('refuses untrusted callbackURL, redirectTo and the other redirect targets with 403 Invalid {field}', async () => {
    const { email } = await signedUpUser(srv.url);
    const cases: [string, Record<string, unknown>, string][] = [
      ['/sign-in/email', { email, password: PASSWORD, callbackURL: 'https://evil.example/steal' }, 'Invalid callbackURL'],
      ['/sign-in/email', { email, password: PASSWORD, callbackURL: '//evil.example/x' }, 'Invalid callbackURL'],
      ['/sign-in/email', { email, password: PASSWORD, callbackURL: 'javascript:alert(1)' }, 'Invalid callbackURL'],
      ['/sign-up/email', { email: uniqueEmail(), password: PASSWORD, name: 'x', callbackURL: 'http://localhost.evil.example/' }, 'Invalid callbackURL'],
      ['/forget-password', { email, redirectTo: 'https://evil.example/reset' }, 'Invalid redirectURL'],
      ['/sign-in/email', { email, password: PASSWORD, errorCallbackURL: 'https://evil.example' }, 'Invalid errorCallbackURL'],
      ['/sign-in/email', { email, password: PASSWORD, newUserCallbackURL: 'https://evil.example' }, 'Invalid newUserCallbackURL'],
    ];
    for (const [path, body, message] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(403);
      expect(await res.json()).toEqual({ code: message.toUpperCase().replace(/ /g, '_'), message });
    }
  });

  it('accepts PUBLIC_URL, TRUSTED_ORIGINS (with wildcards) and safe relative paths', async () => {
    const { email } = await signedUpUser(srv.url);
    for (const callbackURL of [
      '/dashboard/',
      '/welcome?x=1',
      'http://localhost:8000/dashboard/',
      'https://app.example.com/after',
      'https://acme.tenants.example.com/home',
    ]) {
      const res = await post('/sign-in/email', { email, password: PASSWORD, callbackURL });
      expect(res.status, callbackURL).toBe(200);
    }
    const wrongScheme = await post('/sign-in/email', { email, password: PASSWORD, callbackURL: 'http://acme.tenants.example.com/' });
    expect(wrongScheme.status).toBe(403);
  });

  it('checks redirect targets on the GET links too', async () => {
    for (const path of [
      '/verify-email?token=x&callbackURL=https%3A%2F%2Fevil.example',
      '/reset-password/abc?callbackURL=https%3A%2F%2Fevil.example',
      '/delete-user/callback?token=x&callbackURL=https%3A%2F%2Fevil.example',
    ]) {
      const res = await fetch(`${srv.url}/api/auth${path}`, { redirect: 'manual' });
      expect(res.status, path).toBe(403);
      expect(await res.json()).toEqual({ code: 'INVALID_CALLBACKURL', message: 'Invalid callbackURL' });
    }
  });

  it('refuses a cookie-bearing POST from an untrusted Origin, accepts trusted and same origins', async () => {
    const a = await signedUpUser(srv.url);
    const cookie = a.jar.header();
    const evil = await post('/update-user', { name: 'pwned' }, { cookie, origin: 'https://evil.example' });
    expect(evil.status).toBe(403);
    expect(await evil.json()).toEqual({ code: 'INVALID_ORIGIN', message: 'Invalid origin' });
    const referer = await post('/update-user', { name: 'pwned' }, { cookie, referer: 'https://evil.example/page' });
    expect(referer.status).toBe(403);
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data!.user.name).toBe('Test User');

    expect((await post('/update-user', { name: 'ok 1' }, { cookie, origin: 'https://app.example.com' })).status).toBe(200);
    expect((await post('/update-user', { name: 'ok 2' }, { cookie, origin: srv.url })).status).toBe(200);
    expect((await post('/update-user', { name: 'ok 3' }, { cookie, origin: 'http://localhost:8000' })).status).toBe(200);
    // Without cookies there is nothing to ride on: the Origin is not checked.
    const anon = await post('/sign-in/email', { email: a.email, password: PASSWORD }, { origin: 'https://evil.example' });
    expect(anon.status).toBe(200);
  });

  it('through the client, an untrusted origin gets the 403 too', async () => {
    const a = await signedUpUser(srv.url);
    const evil = authClient(srv.url, { origin: 'https://evil.example', jar: a.jar });
    const res = await evil.client.organization.create({ name: 'Evil', slug: `evil-${Date.now()}` });
    expect(res.error).toMatchObject({ status: 403, message: 'Invalid origin' });
  });
});

describe('rate limiting', () => {
  let one: TestServer;
  let two: TestServer;
  beforeAll(async () => {
    // Two API replicas on the same database.
    one = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'true' } });
    two = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'true' }, databaseUrl: one.databaseUrl });
  });
  afterAll(async () => {
    await one?.close();
    await two?.close();
  });

  const ip = () => `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;

  it('allows 3 sign-ins per 10 s per IP and path, across replicas, then answers 429 with X-Retry-After', async () => {
    const client = ip();
    const attempt = (server: TestServer, from = client) =>
      fetch(`${server.url}/api/auth/sign-in/email`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
        body: JSON.stringify({ email: uniqueEmail('rl'), password: PASSWORD }),
      });
    // Each sign-in hashes a password: on a busy machine four of them can take longer than the window.
    // The window is restarted before each attempt, so they all count as made within 10 s.
    const withinWindow = async (server: TestServer) => {
      await one.deps.orm.em
        .fork()
        .getConnection()
        .execute(`update rate_limits set window_start = now() where key like ?`, [`${client}|%`]);
      return attempt(server);
    };
    expect((await attempt(one)).status).toBe(401);
    expect((await withinWindow(two)).status).toBe(401);
    expect((await withinWindow(one)).status).toBe(401);
    const limited = await withinWindow(two);
    expect(limited.status).toBe(429);
    const retry = Number(limited.headers.get('x-retry-after'));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(10);
    expect(await limited.json()).toMatchObject({ message: 'Too many requests. Please try again later.' });

    // Another client, and another path for this client, are not affected.
    expect((await attempt(one, ip())).status).toBe(401);
    const other = await fetch(`${one.url}/api/auth/forget-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
      body: JSON.stringify({ email: uniqueEmail('rl') }),
    });
    expect(other.status).toBe(200);
    // Reads are not limited.
    for (let i = 0; i < 5; i++) {
      expect((await fetch(`${one.url}/api/auth/get-session`, { headers: { 'x-forwarded-for': client } })).status).toBe(200);
    }

    // When the window has passed, requests go through again.
    await one.deps.orm.em
      .fork()
      .getConnection()
      .execute(`update rate_limits set window_start = now() - interval '11 seconds' where key like ?`, [`${client}|%`]);
    expect((await attempt(two)).status).toBe(401);
  });

  it('limits sign-up and the password routes as well', async () => {
    const client = ip();
    for (const path of ['/sign-up/email', '/forget-password', '/send-verification-email']) {
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await fetch(`${one.url}/api/auth${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
          body: JSON.stringify({ email: 'not-an-email', password: 'x', name: 'x' }),
        });
        statuses.push(res.status);
      }
      expect(statuses.slice(0, 3).every((s) => s !== 429), path).toBe(true);
      expect(statuses[3], path).toBe(429);
    }
  });
});
