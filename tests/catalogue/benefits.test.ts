/**
 * /v1/benefits: every type through `@polar-sh/sdk` 0.29.3 (meter_credit, unknown to that SDK, over
 * raw HTTP), property validation, the grants list, deletion, outbox events and tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { SDKValidationError } from '@polar-sh/sdk/models/errors/sdkvalidationerror.js';
import { Benefit } from '../../api/src/modules/benefits/entities.ts';
import { BenefitGrant } from '../../api/src/modules/benefits/grants.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, insertCustomer, insertFile, insertMeter, locs, outbox, sellerB } from './helpers-b.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

/** A guild token as the Discord bot-install flow hands it out: a JWT carrying the server id. */
function guildToken(guildId: string) {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'HS256', typ: 'JWT' })}.${part({ guild_id: guildId, type: 'discord_guild_token' })}.c2lnbmF0dXJl`;
}

describe('benefits through the SDK', () => {
  it('creates the five SDK-known types and reads them back', async () => {
    const s = await sellerB(srv);
    const file = await insertFile(srv, s.organization.id, 'downloadable');

    const custom = await s.polar.benefits.create({ type: 'custom', description: 'Priority support', properties: { note: 'Mail us' } });
    expect(custom).toMatchObject({
      type: 'custom',
      description: 'Priority support',
      selectable: true,
      deletable: true,
      organizationId: s.organization.id,
      isTaxApplicable: false,
      properties: { note: 'Mail us' },
    });
    expect(custom.createdAt).toBeInstanceOf(Date);

    const token = guildToken('112233445566778899');
    const discord = await s.polar.benefits.create({
      type: 'discord',
      description: 'Discord role',
      properties: { guildToken: token, roleId: '998877665544332211' },
    });
    expect(discord).toMatchObject({
      type: 'discord',
      properties: { guildId: '112233445566778899', roleId: '998877665544332211', guildToken: '' },
    });

    const downloadables = await s.polar.benefits.create({
      type: 'downloadables',
      description: 'The e-book',
      properties: { files: [file.id], archived: {} },
    });
    expect(downloadables).toMatchObject({ type: 'downloadables', properties: { files: [file.id], archived: {} } });

    const github = await s.polar.benefits.create({
      type: 'github_repository',
      description: 'Source access',
      properties: { repositoryOwner: 'acme', repositoryName: 'engine', permission: 'pull' },
    });
    expect(github).toMatchObject({
      type: 'github_repository',
      properties: { repositoryOwner: 'acme', repositoryName: 'engine', permission: 'pull' },
    });

    const license = await s.polar.benefits.create({
      type: 'license_keys',
      description: 'License',
      properties: {
        prefix: 'acme',
        expires: { ttl: 1, timeframe: 'year' },
        activations: { limit: 3, enableCustomerAdmin: true },
        limitUsage: 100,
      },
    });
    expect(license).toMatchObject({
      type: 'license_keys',
      properties: { prefix: 'acme', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enableCustomerAdmin: true }, limitUsage: 100 },
    });
    const bare = await s.polar.benefits.create({ type: 'license_keys', description: 'Plain keys', properties: {} });
    expect(bare.properties).toEqual({ prefix: null, expires: null, activations: null, limitUsage: null });

    expect(await s.polar.benefits.get({ id: discord.id })).toEqual(discord);

    const list = await s.polar.benefits.list({ organizationId: s.organization.id });
    expect(list.result.pagination).toEqual({ totalCount: 6, maxPage: 1 });
    expect(new Set(list.result.items.map((b) => b.type))).toEqual(
      new Set(['custom', 'discord', 'downloadables', 'github_repository', 'license_keys']),
    );
    const onlyKeys = await s.polar.benefits.list({ typeFilter: 'license_keys' });
    expect(onlyKeys.result.items.map((b) => b.id).sort()).toEqual([license.id, bare.id].sort());

    // The Discord guild token is write-only: never in a response nor in the outbox.
    const raw = await s.call('GET', `/v1/benefits/${discord.id}`);
    expect(JSON.stringify(raw.body)).not.toContain(token);
    const events = await outbox(srv, s.organization.id, 'benefit.created');
    expect(events.map((e) => e.data.id).sort()).toEqual([custom.id, discord.id, downloadables.id, github.id, license.id, bare.id].sort());
    expect(JSON.stringify(events)).not.toContain(token);
    const stored = await srv.deps.orm.em.fork().findOneOrFail(Benefit, { id: discord.id });
    expect(stored.properties.guild_token).toBe(token);
  });

  it('updates description and properties (type fixed), emitting benefit.updated', async () => {
    const s = await sellerB(srv);
    const license = await s.polar.benefits.create({ type: 'license_keys', description: 'License', properties: { prefix: 'old' } });
    const updated = await s.polar.benefits.update({
      id: license.id,
      requestBody: { type: 'license_keys', description: 'Pro license', properties: { prefix: 'new', limitUsage: 5 } },
    });
    expect(updated).toMatchObject({ description: 'Pro license', properties: { prefix: 'new', limitUsage: 5, expires: null } });
    expect(updated.modifiedAt).toBeInstanceOf(Date);

    const custom = await s.polar.benefits.create({ type: 'custom', description: 'Support', properties: { note: null } });
    const described = await s.polar.benefits.update({ id: custom.id, requestBody: { type: 'custom', description: 'Premium support' } });
    expect(described).toMatchObject({ description: 'Premium support', properties: { note: null } });

    // A Discord update without a token keeps the stored one.
    const token = guildToken('42');
    const discord = await s.polar.benefits.create({ type: 'discord', description: 'Role', properties: { guildToken: token, roleId: '7' } });
    await s.call('PATCH', `/v1/benefits/${discord.id}`, { type: 'discord', properties: { guild_id: '42', role_id: '8', guild_token: '' } });
    const stored = await srv.deps.orm.em.fork().findOneOrFail(Benefit, { id: discord.id });
    expect(stored.properties).toEqual({ guild_id: '42', role_id: '8', guild_token: token });

    const events = await outbox(srv, s.organization.id, 'benefit.updated');
    expect(events.map((e) => [e.data.id, e.data.description])).toEqual([
      [license.id, 'Pro license'],
      [custom.id, 'Premium support'],
      [discord.id, 'Role'],
    ]);
  });

  it('deletes a benefit (204), detaching it from products; a non-deletable one is 403', async () => {
    const s = await sellerB(srv);
    const keep = await s.polar.benefits.create({ type: 'custom', description: 'Keep me', properties: {} });
    const drop = await s.polar.benefits.create({ type: 'custom', description: 'Drop me', properties: {} });
    const product = await s.polar.products.create({ name: 'Bundle', recurringInterval: null, prices: [{ amountType: 'free' }] });
    await s.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [drop.id, keep.id] } });

    await expect(s.polar.benefits.delete({ id: drop.id })).resolves.toBeUndefined();
    await expect(s.polar.benefits.get({ id: drop.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const after = await s.polar.products.get({ id: product.id });
    expect(after.benefits.map((b) => b.id)).toEqual([keep.id]);
    const updates = await outbox(srv, s.organization.id, 'product.updated');
    expect(updates.at(-1)!.data.benefits.map((b: { id: string }) => b.id)).toEqual([keep.id]);
    expect((await s.polar.benefits.list({})).result.items.map((b) => b.id)).toEqual([keep.id]);

    const em = srv.deps.orm.em.fork();
    await em.nativeUpdate(Benefit, { id: keep.id }, { deletable: false });
    const err = await s.polar.benefits.delete({ id: keep.id }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotPermitted);
    const raw = await s.call('DELETE', `/v1/benefits/${keep.id}`);
    expect(raw.status).toBe(403);
    expect(raw.body).toEqual({ error: 'NotPermitted', detail: 'This benefit cannot be deleted.' });
  });

  it("lists a benefit's grants with the customer, filtered by status and customer", async () => {
    const s = await sellerB(srv);
    const benefit = await s.polar.benefits.create({ type: 'custom', description: 'Support', properties: {} });
    const empty = await s.polar.benefits.grants({ id: benefit.id });
    expect(empty.result).toEqual({ items: [], pagination: { totalCount: 0, maxPage: 0 } });

    const alice = await insertCustomer(srv, s.organization.id, 'alice@example.com');
    const bob = await insertCustomer(srv, s.organization.id, 'bob@example.com');
    const em = srv.deps.orm.em.fork();
    const orderId = '3f1c2b9e-6a7d-4e8f-9a0b-1c2d3e4f5a6b';
    const subscriptionId = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
    em.create(BenefitGrant, {
      customer: alice.id, benefit: benefit.id, orderId, subscriptionId: null,
      grantedAt: new Date(), revokedAt: null, properties: {},
    });
    em.create(BenefitGrant, {
      customer: bob.id, benefit: benefit.id, subscriptionId, orderId: null,
      grantedAt: null, revokedAt: new Date(), properties: {},
    });
    await em.flush();

    const all = await s.polar.benefits.grants({ id: benefit.id });
    expect(all.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const granted = await s.polar.benefits.grants({ id: benefit.id, isGranted: true });
    expect(granted.result.items).toHaveLength(1);
    expect(granted.result.items[0]).toMatchObject({
      isGranted: true,
      isRevoked: false,
      orderId,
      subscriptionId: null,
      customerId: alice.id,
      userId: alice.id,
      benefitId: benefit.id,
      customer: { id: alice.id, email: 'alice@example.com', organizationId: s.organization.id },
      properties: {},
    });
    expect(granted.result.items[0]!.grantedAt).toBeInstanceOf(Date);
    const revoked = await s.polar.benefits.grants({ id: benefit.id, isGranted: false });
    expect(revoked.result.items.map((g) => [g.customerId, g.isRevoked, g.subscriptionId])).toEqual([[bob.id, true, subscriptionId]]);
    const byCustomer = await s.polar.benefits.grants({ id: benefit.id, customerId: [bob.id] });
    expect(byCustomer.result.items.map((g) => g.customerId)).toEqual([bob.id]);
    const paged = await s.polar.benefits.grants({ id: benefit.id, limit: 1, page: 2 });
    expect(paged.result.items).toHaveLength(1);
    expect(paged.result.pagination).toEqual({ totalCount: 2, maxPage: 2 });

    // One grant per customer, benefit and origin.
    const dup = srv.deps.orm.em.fork();
    dup.create(BenefitGrant, { customer: alice.id, benefit: benefit.id, orderId, subscriptionId: null, grantedAt: new Date(), revokedAt: null, properties: {} });
    await expect(dup.flush()).rejects.toThrow(/benefit_grants_scope_unique/);
  });
});

describe('meter credit benefits (unknown to SDK 0.29.3)', () => {
  it('creates and reads them over HTTP; the SDK cannot parse them (documented)', async () => {
    const s = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id);
    const created = await s.call('POST', '/v1/benefits/', {
      type: 'meter_credit',
      description: '1000 API calls',
      properties: { units: 1000, meter_id: meter.id, rollover: true },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      type: 'meter_credit',
      description: '1000 API calls',
      properties: { units: 1000, meter_id: meter.id, rollover: true },
      organization_id: s.organization.id,
      modified_at: null,
    });
    const patched = await s.call('PATCH', `/v1/benefits/${created.body.id}`, {
      type: 'meter_credit',
      properties: { units: 500, meter_id: meter.id, rollover: false },
    });
    expect(patched.body.properties).toEqual({ units: 500, meter_id: meter.id, rollover: false });
    await expect(s.polar.benefits.get({ id: created.body.id })).rejects.toBeInstanceOf(SDKValidationError);
  });
});

describe('benefits over raw HTTP', () => {
  it('answers 401 and 403 by scope', async () => {
    expect((await call(srv.url, null, 'GET', '/v1/benefits/')).status).toBe(401);
    const reader = await sellerB(srv, ['benefits:read']);
    const denied = await reader.call('POST', '/v1/benefits/', { type: 'custom', description: 'Nope', properties: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'NotPermitted', detail: 'Missing scope: benefits:write' });
    expect((await reader.call('GET', '/v1/benefits/')).status).toBe(200);
  });

  it('answers 404 for unknown benefits and their grants', async () => {
    const s = await sellerB(srv);
    const id = '0b9d1a3e-5f4c-4e2b-8a1d-2c3e4f5a6b7c';
    for (const [method, path] of [['GET', `/v1/benefits/${id}`], ['DELETE', `/v1/benefits/${id}`], ['GET', `/v1/benefits/${id}/grants`]] as const) {
      const r = await s.call(method, path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ error: 'ResourceNotFound', detail: 'Benefit not found' });
    }
  });

  it('validates properties per type, with references of the organization only', async () => {
    const s = await sellerB(srv);
    const other = await sellerB(srv);
    const foreignFile = await insertFile(srv, other.organization.id, 'downloadable');
    const mediaFile = await insertFile(srv, s.organization.id, 'product_media');
    const ownFile = await insertFile(srv, s.organization.id, 'downloadable');
    const foreignMeter = await insertMeter(srv, other.organization.id);
    const post = (body: unknown) => s.call('POST', '/v1/benefits/', body);

    const files = await post({ type: 'downloadables', description: 'Files', properties: { files: [ownFile.id, foreignFile.id] } });
    expect(files.status).toBe(422);
    expect(files.body.detail).toEqual([
      { type: 'value_error', loc: ['body', 'properties', 'files', 1], msg: 'File not found.', input: foreignFile.id },
    ]);
    expect(locs(await post({ type: 'downloadables', description: 'Files', properties: { files: [mediaFile.id] } }))).toEqual([
      ['body', 'properties', 'files', 0],
    ]);
    expect(locs(await post({ type: 'downloadables', description: 'Files', properties: { files: [] } }))).toEqual([
      ['body', 'properties', 'files'],
    ]);
    const meter = await post({ type: 'meter_credit', description: 'Credits', properties: { units: 10, meter_id: foreignMeter.id, rollover: false } });
    expect(locs(meter)).toEqual([['body', 'properties', 'meter_id']]);
    expect(locs(await post({ type: 'meter_credit', description: 'Credits', properties: { units: 0, meter_id: foreignMeter.id, rollover: false } }))).toEqual([
      ['body', 'properties', 'units'],
    ]);
    expect(locs(await post({ type: 'license_keys', description: 'Keys', properties: { activations: { limit: 51, enable_customer_admin: false } } }))).toEqual([
      ['body', 'properties', 'activations', 'limit'],
    ]);
    expect(locs(await post({ type: 'license_keys', description: 'Keys', properties: { expires: { ttl: 2, timeframe: 'week' } } }))).toEqual([
      ['body', 'properties', 'expires', 'timeframe'],
    ]);
    expect(locs(await post({ type: 'license_keys', description: 'Keys', properties: { limit_usage: 0 } }))).toEqual([
      ['body', 'properties', 'limit_usage'],
    ]);
    expect(locs(await post({ type: 'github_repository', description: 'Repo', properties: { repository_owner: 'acme', repository_name: 'x', permission: 'owner' } }))).toEqual([
      ['body', 'properties', 'permission'],
    ]);
    expect(locs(await post({ type: 'discord', description: 'Role', properties: { role_id: '1', guild_token: 'not-a-jwt' } }))).toEqual([
      ['body', 'properties', 'guild_id'],
    ]);
    expect(locs(await post({ type: 'custom', description: 'ab', properties: {} }))).toEqual([['body', 'description']]);
    expect(locs(await post({ type: 'coupon', description: 'Nope', properties: {} }))).toEqual([['body', 'type']]);
    // Nothing was written by the refused requests.
    expect((await s.call('GET', '/v1/benefits/')).body.pagination.total_count).toBe(0);
  });

  it("refuses changing a benefit's type or pointing it at another organization's meter", async () => {
    const s = await sellerB(srv);
    const other = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id);
    const foreign = await insertMeter(srv, other.organization.id);
    const b = await s.call('POST', '/v1/benefits/', { type: 'meter_credit', description: 'Credits', properties: { units: 5, meter_id: meter.id, rollover: false } });
    const retype = await s.call('PATCH', `/v1/benefits/${b.body.id}`, { type: 'custom', description: 'Now custom' });
    expect(retype.status).toBe(422);
    expect(retype.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'type'], msg: 'The type of a benefit cannot be changed.' })]);
    const moved = await s.call('PATCH', `/v1/benefits/${b.body.id}`, {
      type: 'meter_credit', description: 'Renamed', properties: { units: 5, meter_id: foreign.id, rollover: false },
    });
    expect(locs(moved)).toEqual([['body', 'properties', 'meter_id']]);
    const still = await s.call('GET', `/v1/benefits/${b.body.id}`);
    expect(still.body).toMatchObject({ description: 'Credits', properties: { meter_id: meter.id } });
    expect(await outbox(srv, s.organization.id, 'benefit.updated')).toEqual([]);
  });

  it('lists with query, type and sorting', async () => {
    const s = await sellerB(srv);
    for (const d of ['Bravo support', 'Alpha support', 'Charlie keys']) {
      await s.call('POST', '/v1/benefits/', d.endsWith('keys')
        ? { type: 'license_keys', description: d, properties: {} }
        : { type: 'custom', description: d, properties: {} });
    }
    const sorted = await s.call('GET', '/v1/benefits/?sorting=description');
    expect(sorted.body.items.map((b: { description: string }) => b.description)).toEqual(['Alpha support', 'Bravo support', 'Charlie keys']);
    const q = await s.call('GET', '/v1/benefits/?query=SUPPORT&sorting=-description');
    expect(q.body.items.map((b: { description: string }) => b.description)).toEqual(['Bravo support', 'Alpha support']);
    const typed = await s.call('GET', '/v1/benefits/?type=license_keys&type=discord');
    expect(typed.body.items.map((b: { description: string }) => b.description)).toEqual(['Charlie keys']);
    expect(locs(await s.call('GET', '/v1/benefits/?sorting=type'))).toEqual([['query', 'sorting']]);
    expect(locs(await s.call('GET', '/v1/benefits/?type=coupon'))).toEqual([['query', 'type', 0]]);
  });
});

describe('tenant isolation', () => {
  it("never shows, changes, deletes or grants-lists another organization's benefits", async () => {
    const a = await sellerB(srv);
    const b = await sellerB(srv);
    const benefit = await a.call('POST', '/v1/benefits/', { type: 'custom', description: 'A only', properties: {} });
    const id = benefit.body.id;
    expect((await b.call('GET', `/v1/benefits/${id}`)).status).toBe(404);
    expect((await b.call('PATCH', `/v1/benefits/${id}`, { type: 'custom', description: 'Hijacked' })).status).toBe(404);
    expect((await b.call('DELETE', `/v1/benefits/${id}`)).status).toBe(404);
    expect((await b.call('GET', `/v1/benefits/${id}/grants`)).status).toBe(404);
    const list = await b.call('GET', `/v1/benefits/?organization_id=${a.organization.id}`);
    expect(list.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const cross = await b.call('POST', '/v1/benefits/', { type: 'custom', description: 'Sneaky', properties: {}, organization_id: a.organization.id });
    expect(locs(cross)).toEqual([['body', 'organization_id']]);
    expect((await a.call('GET', `/v1/benefits/${id}`)).body.description).toBe('A only');
  });
});
