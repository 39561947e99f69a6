/** Repositories and external organizations (stored records, created through the ORM) via the SDK. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { ExternalOrganization, Repository } from '../../api/src/modules/repositories/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, locs, sellerWithSdk } from './helpers-c.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;
const ids = { extA: '', extB: '', r1: '', r2: '', r3: '', rB: '' };
const rand = () => Math.random().toString(36).slice(2, 10);
const login = `acme-${rand()}`;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv);
  b = await sellerWithSdk(srv);
  const em = srv.deps.orm.em.fork();
  const orgA = em.getReference(Organization, a.organization.id);
  const orgB = em.getReference(Organization, b.organization.id);
  const extA = em.create(ExternalOrganization, {
    platform: 'github',
    name: login,
    avatarUrl: `https://avatars.example.com/${login}.png`,
    isPersonal: false,
    bio: 'We build things',
    prettyName: 'Acme Inc',
    organization: orgA,
  });
  const extB = em.create(ExternalOrganization, {
    platform: 'github',
    name: `other-${rand()}`,
    avatarUrl: 'https://avatars.example.com/other.png',
    isPersonal: true,
    organization: orgB,
  });
  const repo = (name: string, stars: number, isPrivate: boolean, ext = extA, org = orgA) =>
    em.create(Repository, {
      platform: 'github',
      externalOrganization: ext,
      organization: org,
      name,
      description: `${name} repository`,
      stars,
      license: 'MIT',
      homepage: null,
      isPrivate,
      profileSettings: {},
    });
  const r1 = repo('widgets', 50, false);
  const r2 = repo('gadgets', 500, false);
  const r3 = repo('secret-sauce', 5, true);
  const rB = repo('theirs', 1, false, extB, orgB);
  await em.flush();
  Object.assign(ids, { extA: extA.id, extB: extB.id, r1: r1.id, r2: r2.id, r3: r3.id, rB: rB.id });
});
afterAll(async () => {
  await srv?.close();
});

describe('repositories', () => {
  it('lists through the SDK with filters and sorting', async () => {
    const all = await a.polar.repositories.list({ sorting: ['-stars'] });
    expect(all.result.items.map((r) => r.id)).toEqual([ids.r2, ids.r1, ids.r3]);
    expect(all.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });
    const first = all.result.items[0]!;
    expect(first).toMatchObject({
      platform: 'github',
      name: 'gadgets',
      isPrivate: false,
      stars: 500,
      license: 'MIT',
      homepage: null,
      description: 'gadgets repository',
      profileSettings: {},
      organization: { id: ids.extA, name: login, platform: 'github', isPersonal: false, prettyName: 'Acme Inc', organizationId: a.organization.id },
      internalOrganization: { id: a.organization.id, slug: a.organization.slug },
    });

    expect((await a.polar.repositories.list({ name: 'widgets' })).result.items.map((r) => r.id)).toEqual([ids.r1]);
    expect((await a.polar.repositories.list({ name: ['widgets', 'gadgets'], sorting: ['name'] })).result.items.map((r) => r.id)).toEqual([ids.r2, ids.r1]);
    expect((await a.polar.repositories.list({ isPrivate: true })).result.items.map((r) => r.id)).toEqual([ids.r3]);
    expect((await a.polar.repositories.list({ externalOrganizationName: login, platform: 'github', organizationId: a.organization.id, limit: 2 })).result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    expect((await a.polar.repositories.list({ externalOrganizationName: 'nobody' })).result.items).toEqual([]);

    const raw = await call(srv.url, a.token, 'GET', '/v1/repositories/?sorting=license');
    expect(raw.status).toBe(422);
    expect(locs(raw.body)).toEqual(['query.sorting']);
    expect(locs((await call(srv.url, a.token, 'GET', '/v1/repositories/?platform=gitlab')).body)).toEqual(['query.platform.0']);
  });

  it('gets and updates profile settings', async () => {
    const got = await a.polar.repositories.get({ id: ids.r1 });
    expect(got).toMatchObject({ id: ids.r1, name: 'widgets' });

    const orgId = a.organization.id;
    const updated = await a.polar.repositories.update({
      id: ids.r1,
      repositoryUpdate: {
        profileSettings: {
          setDescription: true,
          description: 'The best widgets',
          setCoverImageUrl: true,
          coverImageUrl: 'https://example.com/cover.png',
          featuredOrganizations: [orgId],
          links: ['https://example.com/docs'],
        },
      },
    });
    expect(updated.profileSettings).toEqual({
      description: 'The best widgets',
      coverImageUrl: 'https://example.com/cover.png',
      featuredOrganizations: [orgId],
      highlightedSubscriptionTiers: null,
      links: ['https://example.com/docs'],
    });

    // Without set_description the description is left alone; with it and no value it is cleared.
    const kept = await call(srv.url, a.token, 'PATCH', `/v1/repositories/${ids.r1}`, { profile_settings: { description: 'ignored' } });
    expect(kept.body.profile_settings.description).toBe('The best widgets');
    const cleared = await call(srv.url, a.token, 'PATCH', `/v1/repositories/${ids.r1}`, { profile_settings: { set_description: true } });
    expect(cleared.body.profile_settings).toMatchObject({ description: null, cover_image_url: 'https://example.com/cover.png' });

    const bad = await call(srv.url, a.token, 'PATCH', `/v1/repositories/${ids.r1}`, { profile_settings: { links: ['not a url'] } });
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual(['body.profile_settings.links.0']);
  });

  it("another organization's repositories are 404 and absent from lists", async () => {
    for (const method of ['GET', 'PATCH']) {
      const res = await call(srv.url, b.token, method, `/v1/repositories/${ids.r1}`, method === 'PATCH' ? { profile_settings: {} } : undefined);
      expect(res.status, method).toBe(404);
      expect(res.body.error).toBe('ResourceNotFound');
    }
    await expect(b.polar.repositories.get({ id: ids.r2 })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await b.polar.repositories.list({ organizationId: a.organization.id })).result.items).toEqual([]);
    expect((await b.polar.repositories.list({})).result.items.map((r) => r.id)).toEqual([ids.rB]);
  });

  it('401 without a token, 403 without the scope', async () => {
    expect((await call(srv.url, null, 'GET', '/v1/repositories/')).status).toBe(401);
    const readOnly = await sellerWithSdk(srv, ['repositories:read']);
    const res = await call(srv.url, readOnly.token, 'PATCH', `/v1/repositories/${ids.r1}`, { profile_settings: {} });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
    expect((await call(srv.url, readOnly.token, 'GET', '/v1/external_organizations/')).status).toBe(403);
  });
});

describe('external organizations', () => {
  it('lists through the SDK with filters, scoped to the caller', async () => {
    const list = await a.polar.externalOrganizations.list({});
    expect(list.result.items).toHaveLength(1);
    expect(list.result.items[0]).toEqual({
      id: ids.extA,
      platform: 'github',
      name: login,
      avatarUrl: `https://avatars.example.com/${login}.png`,
      isPersonal: false,
      bio: 'We build things',
      prettyName: 'Acme Inc',
      company: null,
      blog: null,
      location: null,
      email: null,
      twitterUsername: null,
      organizationId: a.organization.id,
    });
    expect((await a.polar.externalOrganizations.list({ name: login, platform: 'github', sorting: ['-name'] })).result.items).toHaveLength(1);
    expect((await a.polar.externalOrganizations.list({ name: 'nobody' })).result.items).toEqual([]);
    const theirs = await b.polar.externalOrganizations.list({ organizationId: a.organization.id });
    expect(theirs.result.items).toEqual([]);
    expect((await b.polar.externalOrganizations.list({})).result.items.map((o) => o.id)).toEqual([ids.extB]);
  });
});
