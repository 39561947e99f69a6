/**
 * Customer portal through `@polar-sh/sdk` 0.29.3 with a customer session token: the customer's own
 * record, the public organization page, and benefit grants (each type parses as its own variant;
 * another customer's grant is 404 to read and to update, so ids cannot be probed).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, type SellerB } from '../catalogue/helpers-b.ts';
import { benefitsOfEveryType, insertGrant, portalCustomer, portalSeller, type PortalCustomer } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

const collect = async <T>(pages: AsyncIterable<{ result: { items: T[] } }>) => {
  const all: T[] = [];
  for await (const page of pages) all.push(...page.result.items);
  return all;
};

describe('customers/me', () => {
  it('reads the customer of the session in the portal shape', async () => {
    const s = await portalSeller(srv);
    const me = await portalCustomer(srv, s);
    const c = await me.polar.customerPortal.customers.get(me.security);
    expect(c).toMatchObject({ id: me.id, email: me.email, emailVerified: false, name: 'Bea Buyer', billingAddress: null, taxId: null });
    expect(c.oauthAccounts).toEqual({});
    expect(c.createdAt).toBeInstanceOf(Date);

    const raw = await call(srv.url, me.token, 'GET', '/v1/customer-portal/customers/me');
    expect(Object.keys(raw.body).sort()).toEqual(
      ['billing_address', 'created_at', 'email', 'email_verified', 'id', 'modified_at', 'name', 'oauth_accounts', 'tax_id'].sort(),
    );
  });

  it('updates name, billing address, tax id (typed by the billing country) and email', async () => {
    const s = await portalSeller(srv);
    const me = await portalCustomer(srv, s);
    const newEmail = `renamed-${me.id.slice(0, 8)}@Example.com`;
    const c = await me.polar.customerPortal.customers.update(me.security, {
      name: 'Beatrice Buyer',
      email: newEmail,
      billingAddress: { line1: '1 rue de Rivoli', postalCode: '75001', city: 'Paris', country: 'fr' },
      taxId: 'FR 40 303 265 045',
    });
    expect(c.name).toBe('Beatrice Buyer');
    expect(c.email).toBe(newEmail.toLowerCase());
    expect(c.emailVerified).toBe(false);
    expect(c.billingAddress).toMatchObject({ line1: '1 rue de Rivoli', city: 'Paris', country: 'FR', line2: null });
    expect(c.taxId).toEqual(['FR40303265045', 'eu_vat']);

    // The seller sees the change, and a customer.updated event is recorded.
    const seen = await s.polar.customers.get({ id: me.id });
    expect(seen.name).toBe('Beatrice Buyer');
    expect(seen.taxId).toEqual(['FR40303265045', 'eu_vat']);
    const events = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: s.organization.id, type: 'customer.updated' } as never);
    expect(events.length).toBeGreaterThanOrEqual(1);

    // Clearing works; only the sent keys change.
    const cleared = await me.polar.customerPortal.customers.update(me.security, { taxId: null });
    expect(cleared.taxId).toBeNull();
    expect(cleared.name).toBe('Beatrice Buyer');
  });

  it('refuses a tax id without a billing country, and an email another customer has', async () => {
    const s = await portalSeller(srv);
    const me = await portalCustomer(srv, s);
    const other = await portalCustomer(srv, s);
    const noCountry = await call(srv.url, me.token, 'PATCH', '/v1/customer-portal/customers/me', { tax_id: '123456789' });
    expect(noCountry.status).toBe(422);
    expect(noCountry.body.detail[0]).toMatchObject({ loc: ['body', 'tax_id'], msg: 'Country is required to validate tax ID.' });
    await expect(me.polar.customerPortal.customers.update(me.security, { email: other.email })).rejects.toBeInstanceOf(
      HTTPValidationError,
    );
  });

  it('needs a customer session: 401 without credentials, 403 with a seller token', async () => {
    const s = await portalSeller(srv);
    expect((await call(srv.url, null, 'GET', '/v1/customer-portal/customers/me')).status).toBe(401);
    const seller = await call(srv.url, s.token, 'GET', '/v1/customer-portal/customers/me');
    expect(seller.status).toBe(403);
    expect(seller.body.error).toBe('NotPermitted');
    expect((await call(srv.url, 'polar_cst_unknown', 'GET', '/v1/customer-portal/customers/me')).status).toBe(401);
  });
});

describe('organizations/{slug}', () => {
  it('answers the organization and its live products without credentials', async () => {
    const s = await portalSeller(srv);
    const live = await s.call('POST', '/v1/products/', {
      name: 'Pro',
      prices: [{ amount_type: 'fixed', price_amount: 1900, price_currency: 'usd' }],
    });
    expect(live.status).toBe(201);
    const archived = await s.call('POST', '/v1/products/', { name: 'Old', prices: [{ amount_type: 'free' }] });
    await s.call('PATCH', `/v1/products/${archived.body.id}`, { is_archived: true });

    const anonymous = new Polar({ serverURL: srv.url });
    const org = await anonymous.customerPortal.organizations.get({ slug: s.organization.slug });
    expect(org.organization).toMatchObject({ id: s.organization.id, slug: s.organization.slug });
    expect(org.products.map((p) => p.id)).toEqual([live.body.id]);
    expect(org.products[0]!.prices[0]).toMatchObject({ amountType: 'fixed', priceAmount: 1900 });

    // A customer session token works too (the SDK sends it when the client has one).
    const me = await portalCustomer(srv, s);
    expect((await me.polar.customerPortal.organizations.get({ slug: s.organization.slug })).organization.id).toBe(s.organization.id);

    await expect(anonymous.customerPortal.organizations.get({ slug: 'no-such-organization-slug' })).rejects.toBeInstanceOf(
      ResourceNotFound,
    );
  });
});

describe('benefit grants', () => {
  let s: SellerB;
  let me: PortalCustomer;
  let other: PortalCustomer;
  let benefits: Awaited<ReturnType<typeof benefitsOfEveryType>>;
  const grants: Record<string, string> = {};
  let licenseKeyId: string;
  let otherGrant: string;
  let revokedGrant: string;

  beforeAll(async () => {
    s = await portalSeller(srv);
    me = await portalCustomer(srv, s);
    other = await portalCustomer(srv, s);
    benefits = await benefitsOfEveryType(srv, s);
    for (const [type, benefitId] of Object.entries(benefits.ids)) {
      const g = await insertGrant(srv, me.id, benefitId, { orderId: type === 'custom' ? '00000000-0000-4000-8000-000000000001' : undefined });
      grants[type] = g.id;
      if (g.licenseKeyId) licenseKeyId = g.licenseKeyId;
    }
    otherGrant = (await insertGrant(srv, other.id, benefits.ids.custom)).id;
    revokedGrant = (await insertGrant(srv, me.id, benefits.ids.custom, { revoked: true, orderId: '00000000-0000-4000-8000-000000000002' })).id;
  });

  it('lists only the customer’s grants, each parsed as the variant of its benefit type', async () => {
    const all = await collect(await me.polar.customerPortal.benefitGrants.list(me.security, { limit: 100 }));
    expect(all.map((g) => g.id).sort()).toEqual([...Object.values(grants), revokedGrant].sort());
    expect(all.every((g) => g.customerId === me.id && g.customer.id === me.id)).toBe(true);
    expect(all.some((g) => g.id === otherGrant)).toBe(false);

    const byId = new Map(all.map((g) => [g.id, g]));
    for (const [type, id] of Object.entries(grants)) {
      const g = byId.get(id)!;
      expect(g.benefit.type, type).toBe(type);
      expect(g.benefit.organization.id).toBe(s.organization.id);
      expect(g.isGranted).toBe(true);
    }
    const discord = byId.get(grants.discord!)!;
    expect(discord.benefit.properties).toEqual({ guildId: '112233445566778899' });
    // The seller's guild token never reaches the customer.
    const rawDiscord = await call(srv.url, me.token, 'GET', `/v1/customer-portal/benefit-grants/${grants.discord}`);
    expect(JSON.stringify(rawDiscord.body)).not.toContain('secret-guild-token');
    expect(byId.get(grants.license_keys!)!.properties).toEqual({ licenseKeyId, displayKey: expect.stringMatching(/^\*\*\*\*-/) });
    expect(byId.get(grants.downloadables!)!.properties).toEqual({ files: [benefits.fileId] });
    expect(byId.get(grants.github_repository!)!.benefit.properties).toEqual({ repositoryOwner: 'acme', repositoryName: 'engine' });
    const lk = byId.get(grants.license_keys!)!.benefit.properties as { prefix: string; limitUsage: number };
    expect(lk).toMatchObject({ prefix: 'pro', limitUsage: 10 });
    expect(byId.get(revokedGrant)).toMatchObject({ isGranted: false, isRevoked: true });
  });

  it('filters by type, benefit, organization and order, paginates and sorts', async () => {
    const list = (req: Parameters<typeof me.polar.customerPortal.benefitGrants.list>[1]) =>
      me.polar.customerPortal.benefitGrants.list(me.security, req).then((p) => p.result);

    const custom = await list({ typeFilter: 'custom' });
    expect(custom.items.map((g) => g.id).sort()).toEqual([grants.custom, revokedGrant].sort());
    const two = await list({ typeFilter: ['discord', 'github_repository'] });
    expect(two.pagination.totalCount).toBe(2);
    expect((await list({ benefitId: benefits.ids.license_keys })).items.map((g) => g.id)).toEqual([grants.license_keys]);
    expect((await list({ organizationId: s.organization.id })).pagination.totalCount).toBe(6);
    expect((await list({ organizationId: '00000000-0000-4000-8000-0000000000ff' })).pagination.totalCount).toBe(0);
    expect((await list({ orderId: '00000000-0000-4000-8000-000000000001' })).items.map((g) => g.id)).toEqual([grants.custom]);
    expect((await list({ checkoutId: '00000000-0000-4000-8000-000000000003' })).pagination.totalCount).toBe(0);

    const page = await list({ limit: 4, page: 2 });
    expect(page.items).toHaveLength(2);
    expect(page.pagination).toEqual({ totalCount: 6, maxPage: 2 });

    const byType = await list({ sorting: ['type'], limit: 100 });
    const types = byType.items.map((g) => g.benefit.type!);
    expect(types).toEqual([...types].sort());
    const byTypeDesc = await list({ sorting: ['-type'], limit: 100 });
    expect(byTypeDesc.items.map((g) => g.benefit.type!)).toEqual([...types].reverse());

    const bad = await call(srv.url, me.token, 'GET', '/v1/customer-portal/benefit-grants/?sorting=amount');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'sorting']);
  });

  it('reads one grant; another customer’s grant is not found', async () => {
    const g = await me.polar.customerPortal.benefitGrants.get(me.security, { id: grants.license_keys! });
    expect(g.benefit.type).toBe('license_keys');
    await expect(me.polar.customerPortal.benefitGrants.get(me.security, { id: otherGrant })).rejects.toBeInstanceOf(ResourceNotFound);
  });

  it('updates the customer’s own grant; another customer’s grant is not found', async () => {
    const updated = await me.polar.customerPortal.benefitGrants.update(me.security, {
      id: grants.custom!,
      customerBenefitGrantUpdate: { benefitType: 'custom' },
    });
    expect(updated.id).toBe(grants.custom);
    expect(updated.benefit.type).toBe('custom');

    const denied = me.polar.customerPortal.benefitGrants.update(me.security, {
      id: otherGrant,
      customerBenefitGrantUpdate: { benefitType: 'custom' },
    });
    await expect(denied).rejects.toBeInstanceOf(ResourceNotFound);
    const raw = await call(srv.url, me.token, 'PATCH', `/v1/customer-portal/benefit-grants/${otherGrant}`, { benefit_type: 'custom' });
    expect(raw).toMatchObject({ status: 404, body: { error: 'ResourceNotFound' } });

    await expect(
      me.polar.customerPortal.benefitGrants.update(me.security, {
        id: '00000000-0000-4000-8000-0000000000aa',
        customerBenefitGrantUpdate: { benefitType: 'custom' },
      }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    // A revoked grant cannot be updated.
    await expect(
      me.polar.customerPortal.benefitGrants.update(me.security, { id: revokedGrant, customerBenefitGrantUpdate: { benefitType: 'custom' } }),
    ).rejects.toBeInstanceOf(NotPermitted);
  });

  it('checks the update body: matching benefit_type, account_id for Discord and GitHub', async () => {
    const patch = (id: string, body: unknown) => call(srv.url, me.token, 'PATCH', `/v1/customer-portal/benefit-grants/${id}`, body);
    const mismatch = await patch(grants.custom!, { benefit_type: 'downloadables' });
    expect(mismatch.status).toBe(422);
    expect(mismatch.body.detail[0].loc).toEqual(['body', 'benefit_type']);

    const noAccount = await patch(grants.discord!, { benefit_type: 'discord' });
    expect(noAccount.status).toBe(422);
    expect(noAccount.body.detail.map((d: { loc: string[] }) => d.loc.join('.'))).toContain('body.properties');

    // The account must be one of the customer's linked OAuth accounts (none are linked).
    const unlinked = me.polar.customerPortal.benefitGrants.update(me.security, {
      id: grants.github_repository!,
      customerBenefitGrantUpdate: { benefitType: 'github_repository', properties: { accountId: '12345' } },
    });
    await expect(unlinked).rejects.toBeInstanceOf(HTTPValidationError);
    const raw = await patch(grants.discord!, { benefit_type: 'discord', properties: { account_id: '12345' } });
    expect(raw.status).toBe(422);
    expect(raw.body.detail[0]).toMatchObject({ loc: ['body', 'properties', 'account_id'], msg: 'OAuth account does not exist.' });
  });
});
