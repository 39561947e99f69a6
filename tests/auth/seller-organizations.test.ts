/**
 * The seller side of organizations: /v1/organizations (create, read, PATCH by owners and admins) and
 * /v1/organization-access-tokens (create, list, update, revoke), authorized by the session cookie, and
 * read back through the official Polar SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { json, startTestServer, uniqueSlug, type TestServer } from '../harness.ts';
import { signedUpUser, type AuthClient } from './helpers.ts';
import { User } from '../../api/src/auth/entities.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
});
afterAll(async () => {
  await srv?.close();
});

const send = (c: AuthClient, method: string, path: string, body?: unknown) =>
  c.raw(path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

/** An owner with an organization created through /v1, plus an admin and a plain member of it. */
async function team() {
  const owner = await signedUpUser(srv.url);
  const created = await send(owner, 'POST', '/v1/organizations/', { name: 'Seller Co', slug: uniqueSlug('seller') });
  expect(created.status).toBe(201);
  const org = await json(created);
  const add = async (role: 'admin' | 'member') => {
    const u = await signedUpUser(srv.url);
    await srv.deps.orm.em.fork().nativeUpdate(User, { id: u.user.id }, { emailVerified: true });
    u.jar.cookies.delete('better-auth.session_data');
    const inv = await owner.client.organization.inviteMember({ email: u.email, role, organizationId: org.id });
    const acc = await u.client.organization.acceptInvitation({ invitationId: inv.data!.id });
    expect(acc.error).toBeNull();
    return u;
  };
  return { owner, org, admin: await add('admin'), member: await add('member') };
}

describe('/v1/organizations', () => {
  it('makes the creator the owner on both surfaces and answers the shape the Polar SDK parses', async () => {
    const { owner, org } = await team();
    expect(org).toMatchObject({ name: 'Seller Co', pledge_minimum_amount: 2000, pledge_badge_show_amount: false, profile_settings: null });
    const full = await owner.client.organization.getFullOrganization({ query: { organizationId: org.id } });
    expect(full.data!.members.find((m) => m.userId === owner.user.id)!.role).toBe('owner');

    const polar = new Polar({ accessToken: owner.token, serverURL: srv.url });
    const got = await polar.organizations.get({ id: org.id });
    expect(got).toMatchObject({ id: org.id, slug: org.slug, pledgeMinimumAmount: 2000, subscriptionSettings: { prorationBehavior: 'prorate' } });
    const list = await polar.organizations.list({});
    expect(list.result.items.map((o) => o.id)).toContain(org.id);
  });

  it('updates every field of the organization update (owners and admins), with an organization.updated event', async () => {
    const { owner, admin, member, org } = await team();
    const body = {
      name: 'Seller Company',
      avatar_url: 'https://img.example/logo.png',
      email: 'billing@seller.example',
      website: 'https://seller.example',
      socials: [{ platform: 'github', url: 'https://github.com/seller' }],
      details: {
        about: 'We sell things',
        product_description: 'Digital goods',
        intended_use: 'Subscriptions',
        customer_acquisition: ['website'],
        future_annual_revenue: 100000,
        switching_from: 'gumroad',
      },
      feature_settings: { issue_funding_enabled: true },
      subscription_settings: { allow_multiple_subscriptions: true, proration_behavior: 'invoice' },
      default_upfront_split_to_contributors: 10,
      pledge_badge_show_amount: true,
      billing_email: 'invoices@seller.example',
      default_badge_custom_content: 'Back us',
      pledge_minimum_amount: 3000,
      total_monthly_spending_limit: 100000,
      per_user_monthly_spending_limit: 5000,
      profile_settings: { enabled: true, description: 'Hello', links: ['https://seller.example/blog'], accent_color: '#ff0000' },
    };
    const res = await send(owner, 'PATCH', `/v1/organizations/${org.id}`, body);
    expect(res.status).toBe(200);
    const updated = await json(res);
    expect(updated).toMatchObject({
      name: 'Seller Company',
      avatar_url: 'https://img.example/logo.png',
      email: 'billing@seller.example',
      website: 'https://seller.example',
      socials: [{ platform: 'github', url: 'https://github.com/seller' }],
      feature_settings: { issue_funding_enabled: true },
      subscription_settings: { allow_multiple_subscriptions: true, allow_customer_updates: true, proration_behavior: 'invoice' },
      default_upfront_split_to_contributors: 10,
      pledge_badge_show_amount: true,
      pledge_minimum_amount: 3000,
      profile_settings: { enabled: true, description: 'Hello', accent_color: '#ff0000' },
    });
    expect(updated.details_submitted_at).toEqual(expect.any(String));
    expect(updated.modified_at).toEqual(expect.any(String));
    // The membership view is the same row: logo is the avatar.
    const ba = await owner.client.organization.getFullOrganization({ query: { organizationId: org.id } });
    expect(ba.data).toMatchObject({ name: 'Seller Company', logo: 'https://img.example/logo.png' });

    const events = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: org.id, type: 'organization.updated' });
    expect(events.length).toBeGreaterThanOrEqual(1);

    // Through the Polar SDK, as an admin.
    const polar = new Polar({ accessToken: admin.token, serverURL: srv.url });
    const viaSdk = await polar.organizations.update({ id: org.id, organizationUpdate: { name: 'Seller Co 2', pledgeMinimumAmount: 2500 } });
    expect(viaSdk).toMatchObject({ name: 'Seller Co 2', pledgeMinimumAmount: 2500 });

    const denied = await send(member, 'PATCH', `/v1/organizations/${org.id}`, { name: 'Hijack' });
    expect(denied.status).toBe(403);
    expect((await json(denied)).error).toBe('NotPermitted');
    const outsider = await signedUpUser(srv.url);
    expect((await send(outsider, 'PATCH', `/v1/organizations/${org.id}`, { name: 'Hijack' })).status).toBe(404);
    const invalid = await send(owner, 'PATCH', `/v1/organizations/${org.id}`, { email: 'nope', pledge_minimum_amount: 1.5 });
    expect(invalid.status).toBe(422);
  });

  it('creates through the membership API and the seller API alike', async () => {
    const a = await signedUpUser(srv.url);
    const ba = await a.client.organization.create({ name: 'Made via auth', slug: uniqueSlug('via-auth') });
    const res = await send(a, 'GET', `/v1/organizations/${ba.data!.id}`);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ name: 'Made via auth', slug: ba.data!.slug });
    const dup = await send(a, 'POST', '/v1/organizations/', { name: 'Dup org', slug: ba.data!.slug });
    expect(dup.status).toBe(422);
  });
});

describe('/v1/organization-access-tokens', () => {
  it('creates, lists (paginated), updates and revokes tokens; only owners and admins', async () => {
    const { owner, admin, member, org } = await team();
    const create = (c: AuthClient, comment: string, scopes = ['products:read']) =>
      send(c, 'POST', '/v1/organization-access-tokens/', { organization_id: org.id, comment, scopes });

    const denied = await create(member, 'nope');
    expect(denied.status).toBe(403);
    expect((await json(denied)).error).toBe('NotPermitted');

    const first = await json(await create(owner, 'first'));
    const second = await json(await create(admin, 'second', ['products:read', 'products:write']));
    expect(first.token).toMatch(/^polar_oat_/);

    const list = await json(await send(owner, 'GET', `/v1/organization-access-tokens/?organization_id=${org.id}&limit=1`));
    expect(list.pagination).toEqual({ total_count: 2, max_page: 2 });
    expect(list.items).toHaveLength(1);
    const all = await json(await send(admin, 'GET', '/v1/organization-access-tokens/?limit=10&sorting=created_at'));
    expect(all.items.map((t: { comment: string }) => t.comment)).toEqual(['first', 'second']);
    expect(all.items[0]).not.toHaveProperty('token');
    expect((await json(await send(member, 'GET', '/v1/organization-access-tokens/'))).items).toEqual([]);

    const patched = await send(owner, 'PATCH', `/v1/organization-access-tokens/${second.organization_access_token.id}`, {
      comment: 'renamed',
      scopes: ['products:read'],
    });
    expect(patched.status).toBe(200);
    expect(await json(patched)).toMatchObject({ comment: 'renamed', scopes: ['products:read'] });
    const badScope = await send(owner, 'PATCH', `/v1/organization-access-tokens/${second.organization_access_token.id}`, { scopes: ['root'] });
    expect(badScope.status).toBe(422);
    const memberPatch = await send(member, 'PATCH', `/v1/organization-access-tokens/${second.organization_access_token.id}`, { comment: 'x' });
    expect(memberPatch.status).toBe(403);

    // The narrowed token can no longer write products.
    const write = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${second.token}` },
      body: JSON.stringify({ name: 'P', prices: [{ amount_type: 'free' }] }),
    });
    expect(write.status).toBe(403);
    const read = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${first.token}` } });
    expect(read.status).toBe(200);

    const memberDelete = await send(member, 'DELETE', `/v1/organization-access-tokens/${first.organization_access_token.id}`);
    expect(memberDelete.status).toBe(403);
    const revoke = await send(owner, 'DELETE', `/v1/organization-access-tokens/${first.organization_access_token.id}`);
    expect(revoke.status).toBe(204);
    const after = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${first.token}` } });
    expect(after.status).toBe(401);
    expect((await send(owner, 'DELETE', `/v1/organization-access-tokens/${first.organization_access_token.id}`)).status).toBe(404);
    const remaining = await json(await send(owner, 'GET', '/v1/organization-access-tokens/'));
    expect(remaining.items.map((t: { comment: string }) => t.comment)).toEqual(['renamed']);

    const outsider = await signedUpUser(srv.url);
    expect((await send(outsider, 'DELETE', `/v1/organization-access-tokens/${second.organization_access_token.id}`)).status).toBe(404);
  });

  it('does not let an organization token manage tokens', async () => {
    const { owner, org } = await team();
    const { token } = await json(
      await send(owner, 'POST', '/v1/organization-access-tokens/', { organization_id: org.id, comment: 't', scopes: ['organizations:write'] }),
    );
    const res = await fetch(`${srv.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ comment: 'escalate', scopes: ['products:write'] }),
    });
    expect(res.status).toBe(403);
    // It can update its own organization, which organizations:write allows.
    const patch = await fetch(`${srv.url}/v1/organizations/${org.id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ name: 'Renamed by token' }),
    });
    expect(patch.status).toBe(200);
  });
});
