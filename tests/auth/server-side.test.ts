/**
 * What only the server may do, and the cookie-cached get-session path:
 * - add-member is server-only (Better Auth's SERVER_ONLY `addMember`): a 404 over HTTP, whoever asks;
 *   server code adds a member directly, with Better Auth's errors.
 * - get-session answered from the cookie cache before any middleware: the same answer the database
 *   gives, never for a cache cookie without its validly signed token, and revocable as the cookie cache
 *   defines (the cache answers until it expires; `disableCookieCache` sees the revocation at once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { User } from '../../api/src/auth/entities.ts';
import { AuthError } from '../../api/src/auth/errors.ts';
import { addMember } from '../../api/src/auth/server-api.ts';
import type { EntityManager } from '../../api/src/kit/db.ts';
import { Team } from '../../api/src/modules/organizations/entities.ts';
import { startTestServer, uniqueSlug, type TestServer } from '../harness.ts';
import { listMembers, signedUpUser } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
});
afterAll(async () => {
  await srv?.close();
});

const em = () => srv.deps.orm.em.fork() as EntityManager;

async function ownerWithOrg() {
  const owner = await signedUpUser(srv.url);
  const res = await owner.client.organization.create({ name: 'Server Side Inc', slug: uniqueSlug('server') });
  if (res.error) throw new Error(`create failed: ${res.error.message}`);
  return { owner, org: res.data! };
}

async function rejection(p: Promise<unknown>): Promise<AuthError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AuthError);
  return err as AuthError;
}

describe('add-member (server only)', () => {
  it('is not reachable over HTTP, even for the owner', async () => {
    const { owner, org } = await ownerWithOrg();
    const other = await signedUpUser(srv.url);
    const res = await owner.raw('/api/auth/organization/add-member', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: other.user.id, role: 'admin', organizationId: org.id }),
    });
    expect(res.status).toBe(404);
    const members = await listMembers(owner, { organizationId: org.id });
    expect(members.data!.members.map((m) => m.userId)).toEqual([owner.user.id]);
  });

  it('adds a user to an organization from server code, who then sees it', async () => {
    const { owner, org } = await ownerWithOrg();
    const newcomer = await signedUpUser(srv.url);
    const team = await em().findOneOrFail(Team, { organization: org.id });
    const member = await addMember(em(), { userId: newcomer.user.id, role: ['admin', 'member'], organizationId: org.id, teamId: team.id });
    expect(member).toMatchObject({
      organizationId: org.id,
      userId: newcomer.user.id,
      role: 'admin,member',
      teamId: team.id,
      user: { id: newcomer.user.id, email: newcomer.email },
    });

    const members = await listMembers(owner, { organizationId: org.id });
    expect(members.data!.members.map((m) => m.userId).sort()).toEqual([owner.user.id, newcomer.user.id].sort());
    const theirs = await newcomer.client.organization.list();
    expect(theirs.data!.map((o) => o.id)).toEqual([org.id]);
    // As an admin, the newcomer may now invite.
    const inv = await newcomer.client.organization.inviteMember({ email: `friend-${Date.now()}@example.com`, role: 'member', organizationId: org.id });
    expect(inv.error).toBeNull();
  });

  it('refuses with Better Auth’s errors', async () => {
    const { owner, org } = await ownerWithOrg();
    const other = await ownerWithOrg();
    const user = await signedUpUser(srv.url);
    expect(await rejection(addMember(em(), { userId: owner.user.id, role: 'member', organizationId: org.id }))).toMatchObject({
      status: 400,
      message: 'User is already a member of this organization',
    });
    const unknownUser = '00000000-0000-4000-8000-000000000000';
    expect(await rejection(addMember(em(), { userId: unknownUser, role: 'member', organizationId: org.id }))).toMatchObject({
      status: 400,
      message: 'User not found',
    });
    expect(await rejection(addMember(em(), { userId: user.user.id, role: 'member', organizationId: unknownUser }))).toMatchObject({
      status: 400,
      message: 'Organization not found',
    });
    expect(await rejection(addMember(em(), { userId: user.user.id, role: 'emperor', organizationId: org.id }))).toMatchObject({
      status: 400,
      message: 'Role not found',
    });
    const foreignTeam = await em().findOneOrFail(Team, { organization: other.org.id });
    expect(
      await rejection(addMember(em(), { userId: user.user.id, role: 'member', organizationId: org.id, teamId: foreignTeam.id })),
    ).toMatchObject({ status: 400, message: 'Team not found' });
    expect(await rejection(addMember(em(), { userId: '', role: 'member', organizationId: org.id }))).toMatchObject({
      status: 400,
      code: 'VALIDATION_ERROR',
    });
    // None of these added anyone.
    expect((await listMembers(owner, { organizationId: org.id })).data!.members).toHaveLength(1);
  });
});

describe('get-session from the cookie cache', () => {
  const cookieHeader = (jar: { header(): string }) => ({ cookie: jar.header() });

  it('answers exactly what the database answers, uncacheable, with a request id', async () => {
    const a = await signedUpUser(srv.url);
    const fromDb = await fetch(`${srv.url}/api/auth/get-session?disableCookieCache=true`, { headers: cookieHeader(a.jar) });
    const fromCache = await fetch(`${srv.url}/api/auth/get-session`, { headers: { ...cookieHeader(a.jar), 'x-request-id': 'poll-1' } });
    expect(fromCache.status).toBe(200);
    expect(fromCache.headers.get('content-type')).toMatch(/^application\/json/);
    expect(fromCache.headers.get('cache-control')).toBe('no-store');
    expect(fromCache.headers.get('x-request-id')).toBe('poll-1');
    expect(fromCache.headers.getSetCookie()).toEqual([]);
    expect(await fromCache.json()).toEqual(await fromDb.json());
    const withRefreshFlag = await fetch(`${srv.url}/api/auth/get-session?disableRefresh=true`, { headers: cookieHeader(a.jar) });
    expect((await withRefreshFlag.json()) as unknown).toMatchObject({ user: { id: a.user.id } });
  });

  it('ignores a tampered cache and reads the database (and caches again)', async () => {
    const a = await signedUpUser(srv.url);
    await em().nativeUpdate(User, { id: a.user.id }, { name: 'Renamed' });
    const cache = a.jar.get('better-auth.session_data')!;
    const decoded = JSON.parse(Buffer.from(decodeURIComponent(cache), 'base64url').toString('utf8')) as {
      session: { user: { name: string } };
    };
    decoded.session.user.name = 'Mallory';
    a.jar.cookies.set('better-auth.session_data', Buffer.from(JSON.stringify(decoded)).toString('base64url'));
    const s = await a.client.getSession();
    expect(s.data!.user.name).toBe('Renamed');
    expect(a.jar.get('better-auth.session_data')).not.toBe(cache);
    expect((await a.client.getSession()).data!.user.name).toBe('Renamed');
  });

  it('is no session without the validly signed token cookie beside it', async () => {
    const a = await signedUpUser(srv.url);
    const token = a.jar.get('better-auth.session_token')!;
    a.jar.cookies.set('better-auth.session_token', decodeURIComponent(token).split('.')[0]!);
    expect((await a.client.getSession()).data).toBeNull();
    a.jar.cookies.delete('better-auth.session_token');
    const onlyCache = await fetch(`${srv.url}/api/auth/get-session`, { headers: cookieHeader(a.jar) });
    expect(await onlyCache.json()).toBeNull();
  });

  it('keeps answering a revoked session only from the cache, never from the database', async () => {
    const a = await signedUpUser(srv.url);
    // Revoked elsewhere (every session of the user deleted).
    const revoke = await fetch(`${srv.url}/api/auth/revoke-sessions`, {
      method: 'POST',
      headers: { ...cookieHeader(a.jar), 'content-type': 'application/json' },
      body: '{}',
    });
    expect(revoke.status).toBe(200);
    // Another tab of the same browser still sends the cookies it holds (this request did not store the clearing).
    const cached = await fetch(`${srv.url}/api/auth/get-session`, { headers: cookieHeader(a.jar) });
    expect(((await cached.json()) as { user: { id: string } }).user.id).toBe(a.user.id);
    const fresh = await fetch(`${srv.url}/api/auth/get-session?disableCookieCache=true`, { headers: cookieHeader(a.jar) });
    expect(await fresh.json()).toBeNull();
  });
});
