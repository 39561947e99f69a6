/**
 * The admin plugin through the official Better Auth 1.2 client (`adminClient`): the admin role and
 * ADMIN_USER_IDS, listing users, bans (sessions end, sign-in refused until unbanned), impersonation and
 * stopping it, and a non-admin refused on every admin route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAuthClient, type BetterAuthClientPlugin } from 'better-auth/client';
import { adminClient } from 'better-auth/client/plugins';
import { randomUUID } from 'node:crypto';
import { Account, Session, User } from '../../api/src/auth/entities.ts';
import { hashPassword } from '../../api/src/auth/password.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { CookieJar, PASSWORD } from './helpers.ts';

type Res<T> = Promise<{ data: T | null; error: { status: number; message?: string } | null }>;
interface UserShape {
  id: string;
  email: string;
  name: string;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: string | null;
}
interface SessionShape {
  id: string;
  token: string;
  userId: string;
  expiresAt: string;
  createdAt: string;
  impersonatedBy: string | null;
}
/** The adminClient's methods as this test calls them (the plugin goes in untyped, as in two-factor.test.ts). */
interface AdminApi {
  admin: {
    createUser(b: { email: string; password: string; name: string; role?: string }): Res<{ user: UserShape }>;
    listUsers(o: { query: Record<string, string | number | boolean> }): Res<{ users: UserShape[]; total: number; limit?: number; offset?: number }>;
    setRole(b: { userId: string; role: string }): Res<{ user: UserShape }>;
    banUser(b: { userId: string; banReason?: string; banExpiresIn?: number }): Res<{ user: UserShape }>;
    unbanUser(b: { userId: string }): Res<{ user: UserShape }>;
    impersonateUser(b: { userId: string }): Res<{ session: SessionShape; user: UserShape }>;
    stopImpersonating(): Res<{ session: SessionShape; user: UserShape }>;
    listUserSessions(b: { userId: string }): Res<{ sessions: SessionShape[] }>;
    revokeUserSession(b: { sessionToken: string }): Res<{ success: boolean }>;
    revokeUserSessions(b: { userId: string }): Res<{ success: boolean }>;
    removeUser(b: { userId: string }): Res<{ success: boolean }>;
    setUserPassword(b: { userId: string; newPassword: string }): Res<{ status: boolean }>;
    hasPermission(b: { permissions: Record<string, string[]> }): Res<{ success: boolean }>;
  };
  signUp: { email(b: { email: string; password: string; name: string }): Res<{ token: string | null; user: UserShape }> };
  signIn: { email(b: { email: string; password: string }): Res<{ token: string; user: UserShape }> };
  getSession(o?: { query?: { disableCookieCache?: boolean } }): Res<{ session: SessionShape; user: UserShape }>;
}

let srv: TestServer;
const rootEmail = uniqueEmail('root');

function client(jar = new CookieJar()) {
  const customFetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const cookie = jar.header();
    if (cookie) headers.set('cookie', cookie);
    const res = await fetch(input, { ...init, headers, redirect: 'manual' });
    jar.store(res);
    return res;
  };
  const c = createAuthClient({
    baseURL: `${srv.url}/api/auth`,
    plugins: [adminClient() as unknown as BetterAuthClientPlugin],
    fetchOptions: { customFetchImpl },
  });
  return { client: c as unknown as AdminApi, jar };
}

async function signedUp(name = 'Someone') {
  const c = client();
  const email = uniqueEmail('adm');
  const res = await c.client.signUp.email({ email, password: PASSWORD, name });
  expect(res.error).toBeNull();
  return { ...c, email, id: res.data!.user.id };
}

/** An admin by role (set in the database, as an operator would for the first one). */
async function admin() {
  const a = await signedUp('Admin');
  await srv.deps.orm.em.fork().nativeUpdate(User, { id: a.id }, { role: 'admin' });
  return a;
}

async function live(c: ReturnType<typeof client>) {
  return (await c.client.getSession({ query: { disableCookieCache: true } })).data;
}

const rootId = randomUUID();

beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false', ADMIN_USER_IDS: rootId } });
  // The configured administrator: a plain user (role `user`) with that id.
  const em = srv.deps.orm.em.fork();
  const root = em.create(User, { id: rootId, email: rootEmail, name: 'Root', emailVerified: true, image: null });
  em.create(Account, { user: root, providerId: 'credential', accountId: rootId, password: await hashPassword(PASSWORD) });
  await em.flush();
});
afterAll(async () => {
  await srv?.close();
});

describe('admin plugin', () => {
  it('lets a user in ADMIN_USER_IDS act without the admin role, and the admin role too', async () => {
    const root = client();
    expect((await root.client.signIn.email({ email: rootEmail, password: PASSWORD })).error).toBeNull();
    expect((await live(root))!.user.role).toBe('user');
    const listed = await root.client.admin.listUsers({ query: { searchValue: rootEmail, searchField: 'email' } });
    expect(listed.error).toBeNull();
    expect(listed.data!.users.map((u) => u.id)).toEqual([rootId]);

    const u = await signedUp('Promoted');
    expect((await u.client.admin.listUsers({ query: {} })).error).toMatchObject({ status: 403, message: 'You are not allowed to list users' });
    const promoted = await root.client.admin.setRole({ userId: u.id, role: 'admin' });
    expect(promoted.data!.user.role).toBe('admin');
    expect((await u.client.admin.listUsers({ query: { limit: 1 } })).error).toBeNull();
    expect((await u.client.admin.hasPermission({ permissions: { user: ['ban'] } })).data).toMatchObject({ success: true });
  });

  it('creates users and lists them with search, filter, sort and pages', async () => {
    const a = await admin();
    const tag = `lst${Date.now().toString(36)}`;
    const made: UserShape[] = [];
    for (const name of ['Charlie', 'Alice', 'Bob']) {
      const res = await a.client.admin.createUser({ email: `${tag}-${name.toLowerCase()}@example.com`, password: PASSWORD, name: `${tag} ${name}` });
      expect(res.error).toBeNull();
      made.push(res.data!.user);
    }
    expect((await a.client.admin.createUser({ email: made[0]!.email, password: PASSWORD, name: 'Again' })).error).toMatchObject({ status: 400, message: 'User already exists' });
    // The created user signs in with the password given.
    expect((await client().client.signIn.email({ email: made[1]!.email, password: PASSWORD })).error).toBeNull();

    const byName = await a.client.admin.listUsers({ query: { searchValue: tag, searchField: 'name', sortBy: 'name', sortDirection: 'desc' } });
    expect(byName.data!.total).toBe(3);
    expect(byName.data!.users.map((u) => u.name)).toEqual([`${tag} Charlie`, `${tag} Bob`, `${tag} Alice`]);
    const page = await a.client.admin.listUsers({ query: { searchValue: tag, searchField: 'name', sortBy: 'name', limit: 2, offset: 1 } });
    expect(page.data).toMatchObject({ total: 3, limit: 2, offset: 1 });
    expect(page.data!.users.map((u) => u.name)).toEqual([`${tag} Bob`, `${tag} Charlie`]);

    await a.client.admin.setRole({ userId: made[2]!.id, role: 'admin' });
    const admins = await a.client.admin.listUsers({ query: { searchValue: tag, searchField: 'name', filterField: 'role', filterValue: 'admin' } });
    expect(admins.data!.users.map((u) => u.id)).toEqual([made[2]!.id]);
  });

  it('ends the sessions of a banned user and refuses their sign-in until unbanned', async () => {
    const a = await admin();
    const u = await signedUp('Banned');
    expect(await live(u)).not.toBeNull();

    expect((await a.client.admin.banUser({ userId: a.id })).error).toMatchObject({ status: 400, message: 'You cannot ban yourself' });
    const banned = await a.client.admin.banUser({ userId: u.id, banReason: 'spam', banExpiresIn: 3600 });
    expect(banned.error).toBeNull();
    expect(banned.data!.user).toMatchObject({ banned: true, banReason: 'spam' });
    expect(Date.parse(banned.data!.user.banExpires!)).toBeGreaterThan(Date.now());

    expect(await live(u)).toBeNull();
    expect(await srv.deps.orm.em.fork().count(Session, { user: u.id })).toBe(0);
    const refused = await client().client.signIn.email({ email: u.email, password: PASSWORD });
    expect(refused.error).toMatchObject({ status: 403 });
    expect(refused.error!.message).toMatch(/banned/);

    expect((await a.client.admin.unbanUser({ userId: u.id })).data!.user).toMatchObject({ banned: false, banReason: null });
    expect((await client().client.signIn.email({ email: u.email, password: PASSWORD })).error).toBeNull();
  });

  it('impersonates a user for an hour in a marked session, then returns to the admin', async () => {
    const a = await admin();
    const u = await signedUp('Target');
    const before = Date.now();
    const res = await a.client.admin.impersonateUser({ userId: u.id });
    const after = Date.now();
    expect(res.error).toBeNull();
    const now = await live(a);
    expect(now!.user.id).toBe(u.id);
    expect(now!.session.impersonatedBy).toBe(a.id);
    const expires = Date.parse(now!.session.expiresAt);
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(after + 3600_000 + 1000);

    // The impersonated user does not see the admin's session among theirs.
    const own = await u.client.admin.listUserSessions({ userId: u.id });
    expect(own.error).toMatchObject({ status: 403 });

    const back = await a.client.admin.stopImpersonating();
    expect(back.error).toBeNull();
    expect(back.data!.user.id).toBe(a.id);
    expect((await live(a))!.user.id).toBe(a.id);
    const sessions = await a.client.admin.listUserSessions({ userId: u.id });
    expect(sessions.data!.sessions.map((s) => s.impersonatedBy)).toEqual([null]);

    expect((await a.client.admin.stopImpersonating()).error).toMatchObject({ status: 400, message: 'You are not impersonating anyone' });
  });

  it('lists and revokes a user’s sessions, sets a password and removes the user', async () => {
    const a = await admin();
    const u = await signedUp('Managed');
    const second = client();
    await second.client.signIn.email({ email: u.email, password: PASSWORD });
    const { sessions } = (await a.client.admin.listUserSessions({ userId: u.id })).data!;
    expect(sessions).toHaveLength(2);
    expect((await a.client.admin.revokeUserSession({ sessionToken: sessions[0]!.token })).data).toEqual({ success: true });
    expect(await live(u)).toBeNull();
    expect(await live(second)).not.toBeNull();
    await a.client.admin.revokeUserSessions({ userId: u.id });
    expect(await live(second)).toBeNull();

    expect((await a.client.admin.setUserPassword({ userId: u.id, newPassword: 'another good password' })).data).toEqual({ status: true });
    expect((await client().client.signIn.email({ email: u.email, password: PASSWORD })).error).toMatchObject({ status: 401 });
    expect((await client().client.signIn.email({ email: u.email, password: 'another good password' })).error).toBeNull();

    expect((await a.client.admin.removeUser({ userId: u.id })).data).toEqual({ success: true });
    expect(await srv.deps.orm.em.fork().count(User, { id: u.id })).toBe(0);
  });

  it('refuses a non-admin on every admin route', async () => {
    const u = await signedUp('Plain');
    const other = await signedUp('Other');
    const c = u.client.admin;
    const refusals = await Promise.all([
      c.createUser({ email: uniqueEmail('x'), password: PASSWORD, name: 'x' }),
      c.listUsers({ query: {} }),
      c.setRole({ userId: u.id, role: 'admin' }),
      c.banUser({ userId: other.id }),
      c.unbanUser({ userId: other.id }),
      c.impersonateUser({ userId: other.id }),
      c.listUserSessions({ userId: other.id }),
      c.revokeUserSession({ sessionToken: 'x' }),
      c.revokeUserSessions({ userId: other.id }),
      c.removeUser({ userId: other.id }),
      c.setUserPassword({ userId: other.id, newPassword: 'a new password 1' }),
    ]);
    expect(refusals.map((r) => r.error?.status)).toEqual(refusals.map(() => 403));
    expect((await c.hasPermission({ permissions: { user: ['list'] } })).data).toMatchObject({ success: false });
    expect((await c.stopImpersonating()).error).toMatchObject({ status: 400 });
    // Nothing changed: still a user, the other still signed in, not banned.
    expect((await live(u))!.user.role).toBe('user');
    expect((await live(other))!.user).toMatchObject({ banned: false });
  });
});
