/**
 * Organization plugin options (SPEC section 6): who may create organizations (ORGANIZATION_CREATION),
 * how many (ORGANIZATION_LIMIT, per role ORGANIZATION_LIMIT_BY_ROLE), with the plugin's two messages;
 * has-permission combining resources with AND (default) or OR.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Account, User } from '../../api/src/auth/entities.ts';
import { hashPassword } from '../../api/src/auth/password.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { PASSWORD, authClient, signedUpUser, type AuthClient } from './helpers.ts';

let srv: TestServer;
const configuredAdmin = randomUUID();
beforeAll(async () => {
  srv = await startTestServer({
    worker: false,
    env: {
      RATE_LIMIT_ENABLED: 'false',
      ORGANIZATION_CREATION: 'admins',
      ORGANIZATION_LIMIT: '1',
      ORGANIZATION_LIMIT_BY_ROLE: '{"admin": 2}',
      ADMIN_USER_IDS: configuredAdmin,
    },
  });
});
afterAll(async () => {
  await srv?.close();
});

const slug = () => `opt-${randomUUID().slice(0, 8)}`;

async function create(u: AuthClient) {
  const s = slug();
  return u.client.organization.create({ name: s, slug: s });
}

describe('organization creation options', () => {
  it('refuses users the policy does not allow', async () => {
    const u = await signedUpUser(srv.url);
    const res = await create(u);
    expect(res.error).toMatchObject({ status: 403, message: 'You are not allowed to create a new organization' });
    expect((await u.client.organization.list()).data).toEqual([]);
  });

  it('caps admins by their role and others by the default limit', async () => {
    const a = await signedUpUser(srv.url);
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: a.user.id }, { role: 'admin' });
    expect((await create(a)).error).toBeNull();
    expect((await create(a)).error).toBeNull();
    const third = await create(a);
    expect(third.error).toMatchObject({ status: 403, message: 'You have reached the maximum number of organizations' });
    expect((await a.client.organization.list()).data).toHaveLength(2);

    // A user in ADMIN_USER_IDS may create, with the role `user` and so the default cap of 1.
    const em = srv.deps.orm.em.fork();
    const email = `root-${randomUUID().slice(0, 8)}@example.com`;
    const root = em.create(User, { id: configuredAdmin, email, name: 'Root', emailVerified: true, image: null });
    em.create(Account, { user: root, providerId: 'credential', accountId: configuredAdmin, password: await hashPassword(PASSWORD) });
    await em.flush();
    const u = authClient(srv.url);
    expect((await u.client.signIn.email({ email, password: PASSWORD })).error).toBeNull();
    expect((await create(u)).error).toBeNull();
    expect((await create(u)).error).toMatchObject({ status: 403, message: 'You have reached the maximum number of organizations' });
  });
});

describe('the seller API applies the same policy', () => {
  it('refuses POST /v1/organizations/ to users the policy does not allow, and caps the others', async () => {
    const post = (u: AuthClient) =>
      u.raw('/v1/organizations/', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Shop', slug: slug() }),
      });
    const u = await signedUpUser(srv.url);
    const refused = await post(u);
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({ error: 'NotPermitted', detail: 'You are not allowed to create a new organization' });

    const a = await signedUpUser(srv.url);
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: a.user.id }, { role: 'admin' });
    expect((await post(a)).status).toBe(201);
    expect((await post(a)).status).toBe(201);
    const third = await post(a);
    expect(third.status).toBe(403);
    expect((await third.json()).detail).toBe('You have reached the maximum number of organizations');
  });
});

describe('has-permission', () => {
  it('combines resources with AND by default and with OR when asked', async () => {
    const a = await signedUpUser(srv.url);
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: a.user.id }, { role: 'admin' });
    const org = await create(a);
    expect(org.error).toBeNull();
    const ask = async (permissions: Record<string, string[]>, connector?: 'AND' | 'OR') => {
      const res = await a.raw('/api/auth/organization/has-permission', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ organizationId: org.data!.id, permissions, ...(connector ? { connector } : {}) }),
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { success: boolean }).success;
    };
    // The creator is the owner: may delete the organization and create teams.
    expect(await ask({ organization: ['delete'], team: ['create'] })).toBe(true);
    // An action no role has ('organization: transfer') fails AND, and OR passes on the other resource.
    expect(await ask({ organization: ['transfer'], team: ['create'] })).toBe(false);
    expect(await ask({ organization: ['transfer'], team: ['create'] }, 'AND')).toBe(false);
    expect(await ask({ organization: ['transfer'], team: ['create'] }, 'OR')).toBe(true);
    expect(await ask({ organization: ['transfer'] }, 'OR')).toBe(false);
  });
});
