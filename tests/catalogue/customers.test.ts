/** Customers through the official SDK (contract) and raw HTTP (errors, isolation, webhook outbox). */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, locs, sellerWithSdk } from './helpers-c.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv);
  b = await sellerWithSdk(srv);
});
afterAll(async () => {
  await srv?.close();
});

const rand = () => Math.random().toString(36).slice(2, 10);
const email = (tag = 'buyer') => `${tag}-${rand()}@example.com`;

describe('customers through the SDK', () => {
  it('creates a customer: email lower-cased, billing address, tax id, avatar URL', async () => {
    const e = email('Mixed');
    const ext = `ext-${rand()}`;
    const c = await a.polar.customers.create({
      email: e.toUpperCase(),
      name: 'Ada Buyer',
      externalId: ext,
      metadata: { plan: 'pro', seats: 3, trial: false },
      billingAddress: { line1: '1 Main St', city: 'Berlin', postalCode: '10115', country: 'de' },
      taxId: ['DE123456789', 'eu_vat'],
    });
    expect(c).toMatchObject({
      email: e.toLowerCase(),
      emailVerified: false,
      name: 'Ada Buyer',
      externalId: ext,
      organizationId: a.organization.id,
      metadata: { plan: 'pro', seats: 3, trial: false },
      billingAddress: { line1: '1 Main St', line2: null, city: 'Berlin', postalCode: '10115', state: null, country: 'DE' },
      taxId: ['DE123456789', 'eu_vat'],
    });
    expect(c.createdAt).toBeInstanceOf(Date);
    const md5 = createHash('md5').update(e.toLowerCase()).digest('hex');
    expect(c.avatarUrl).toBe(`https://www.gravatar.com/avatar/${md5}?d=404`);

    const raw = await call(srv.url, a.token, 'GET', `/v1/customers/${c.id}`);
    expect(raw.body).toMatchObject({ deleted_at: null, modified_at: null, tax_id: ['DE123456789', 'eu_vat'] });

    const minimal = await a.polar.customers.create({ email: email() });
    expect(minimal).toMatchObject({ name: null, externalId: null, billingAddress: null, taxId: null, metadata: {} });
  });

  it('gets, updates and reads state by id and by external id', async () => {
    const ext = `ext-${rand()}`;
    const c = await a.polar.customers.create({ email: email(), externalId: ext });

    expect((await a.polar.customers.get({ id: c.id })).id).toBe(c.id);
    expect((await a.polar.customers.getExternal({ externalId: ext })).id).toBe(c.id);

    const newEmail = email('renamed');
    const u = await a.polar.customers.update({ id: c.id, customerUpdate: { name: 'New Name', email: newEmail.toUpperCase() } });
    expect(u).toMatchObject({ name: 'New Name', email: newEmail, externalId: ext });
    expect(u.modifiedAt).toBeInstanceOf(Date);

    const ue = await a.polar.customers.updateExternal({
      externalId: ext,
      customerUpdate: { billingAddress: { country: 'US', state: 'NY' }, metadata: { tier: 'gold' } },
    });
    expect(ue).toMatchObject({ id: c.id, billingAddress: { country: 'US', state: 'NY' }, metadata: { tier: 'gold' } });

    const state = await a.polar.customers.getState({ id: c.id });
    expect(state).toMatchObject({ id: c.id, email: newEmail, activeSubscriptions: [], grantedBenefits: [] });
    const stateExt = await a.polar.customers.getStateExternal({ externalId: ext });
    expect(stateExt).toMatchObject({ id: c.id, externalId: ext, activeSubscriptions: [], grantedBenefits: [] });

    // Clearing nullable fields with null.
    const cleared = await call(srv.url, a.token, 'PATCH', `/v1/customers/${c.id}`, { name: null, billing_address: null, external_id: null });
    expect(cleared.body).toMatchObject({ name: null, billing_address: null, external_id: null });
    expect((await call(srv.url, a.token, 'GET', `/v1/customers/external/${ext}`)).status).toBe(404);
  });

  it('lists with email, query and metadata filters and sorting', async () => {
    const tag = rand();
    const c1 = await a.polar.customers.create({ email: `zed-${tag}@example.com`, name: 'Zed', metadata: { tier: 'gold', seats: 5, vip: true } });
    const c2 = await a.polar.customers.create({ email: `amy-${tag}@example.com`, name: 'Amy', metadata: { tier: 'silver', seats: 5 } });
    const c3 = await a.polar.customers.create({ email: `bob-${tag}@example.com`, name: 'Bob', externalId: `ext-${tag}` });

    const byQuery = await a.polar.customers.list({ query: tag, sorting: ['email'] });
    expect(byQuery.result.items.map((c) => c.id)).toEqual([c2.id, c3.id, c1.id]);
    expect(byQuery.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });
    const byName = await a.polar.customers.list({ query: tag, sorting: ['-name'], limit: 2 });
    expect(byName.result.items.map((c) => c.id)).toEqual([c1.id, c3.id]);
    expect(byName.result.pagination).toEqual({ totalCount: 3, maxPage: 2 });
    expect((await a.polar.customers.list({ query: `EXT-${tag}` })).result.items.map((c) => c.id)).toEqual([c3.id]);
    expect((await a.polar.customers.list({ email: `AMY-${tag}@example.com` })).result.items.map((c) => c.id)).toEqual([c2.id]);

    const gold = await a.polar.customers.list({ query: tag, metadata: { tier: 'gold' } });
    expect(gold.result.items.map((c) => c.id)).toEqual([c1.id]);
    const seats = await a.polar.customers.list({ query: tag, metadata: { seats: 5 }, sorting: ['name'] });
    expect(seats.result.items.map((c) => c.id)).toEqual([c2.id, c1.id]);
    const vip = await a.polar.customers.list({ query: tag, metadata: { vip: true, seats: 5 } });
    expect(vip.result.items.map((c) => c.id)).toEqual([c1.id]);
    const either = await a.polar.customers.list({ query: tag, metadata: { tier: ['gold', 'silver'] }, sorting: ['name'] });
    expect(either.result.items.map((c) => c.id)).toEqual([c2.id, c1.id]);

    const longKey = 'k'.repeat(41);
    const badKey = await call(srv.url, a.token, 'GET', `/v1/customers/?metadata%5B${longKey}%5D=x`);
    expect(badKey.status).toBe(422);
    expect(locs(badKey.body)).toEqual([`query.metadata.${longKey}`]);
    const bad = await call(srv.url, a.token, 'GET', '/v1/customers/?sorting=external_id');
    expect(bad.status).toBe(422);
    expect(locs(bad.body)).toEqual(['query.sorting']);
  });

  it('deletes softly: 404 afterwards, email and external id free again, by id and by external id', async () => {
    const e = email();
    const ext = `ext-${rand()}`;
    const c = await a.polar.customers.create({ email: e, externalId: ext });
    await a.polar.customers.delete({ id: c.id });
    await expect(a.polar.customers.get({ id: c.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(a.polar.customers.getExternal({ externalId: ext })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(a.polar.customers.getState({ id: c.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await call(srv.url, a.token, 'DELETE', `/v1/customers/${c.id}`)).status).toBe(404);
    expect((await a.polar.customers.list({ email: e })).result.items).toEqual([]);
    const row = await srv.deps.orm.em.fork().findOneOrFail(Customer, { id: c.id });
    expect(row.deletedAt).toBeInstanceOf(Date);

    const again = await a.polar.customers.create({ email: e, externalId: ext });
    expect(again.id).not.toBe(c.id);
    await a.polar.customers.deleteExternal({ externalId: ext });
    expect((await call(srv.url, a.token, 'GET', `/v1/customers/${again.id}`)).status).toBe(404);
  });

  it('writes customer.created / updated / deleted to the outbox with the read model', async () => {
    const s = await sellerWithSdk(srv);
    const c = await s.polar.customers.create({ email: email() });
    await s.polar.customers.update({ id: c.id, customerUpdate: { name: 'Evented' } });
    await s.polar.customers.delete({ id: c.id });
    const events = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId: s.organization.id }, { orderBy: { createdAt: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated', 'customer.deleted']);
    expect(events.every((e) => e.data.id === c.id)).toBe(true);
    expect(events[1]!.data).toMatchObject({ name: 'Evented', email: c.email });
    expect(events[2]!.data.deleted_at).toEqual(expect.any(String));
  });
});

describe('customer rules (raw HTTP)', () => {
  it('email and external id are unique per organization among live customers', async () => {
    const e = email();
    const ext = `ext-${rand()}`;
    expect((await call(srv.url, a.token, 'POST', '/v1/customers/', { email: e, external_id: ext })).status).toBe(201);
    const dupEmail = await call(srv.url, a.token, 'POST', '/v1/customers/', { email: e.toUpperCase() });
    expect(dupEmail.status).toBe(422);
    expect(locs(dupEmail.body)).toEqual(['body.email']);
    const dupExt = await call(srv.url, a.token, 'POST', '/v1/customers/', { email: email(), external_id: ext });
    expect(locs(dupExt.body)).toEqual(['body.external_id']);
    // Another organization may hold the same email and external id.
    expect((await call(srv.url, b.token, 'POST', '/v1/customers/', { email: e, external_id: ext })).status).toBe(201);

    const other = (await call(srv.url, a.token, 'POST', '/v1/customers/', { email: email() })).body;
    const upd = await call(srv.url, a.token, 'PATCH', `/v1/customers/${other.id}`, { email: e, name: 'not applied' });
    expect(locs(upd.body)).toEqual(['body.email']);
    const upd2 = await call(srv.url, a.token, 'PATCH', `/v1/customers/${other.id}`, { external_id: ext });
    expect(locs(upd2.body)).toEqual(['body.external_id']);
    expect((await call(srv.url, a.token, 'GET', `/v1/customers/${other.id}`)).body.name).toBeNull();
  });

  it('validates email, country, tax id and metadata with the field in loc', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'body.email'],
      [{ email: 'not-an-email' }, 'body.email'],
      [{ email: email(), billing_address: { line1: 'x' } }, 'body.billing_address.country'],
      [{ email: email(), billing_address: { country: 'XX' } }, 'body.billing_address.country'],
      [{ email: email(), billing_address: { country: 'USA' } }, 'body.billing_address.country'],
      [{ email: email(), tax_id: ['123', 'bogus_type'] }, 'body.tax_id.1'],
      [{ email: email(), tax_id: 'DE123' }, 'body.tax_id'],
      [{ email: email(), metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i])) }, 'body.metadata'],
      [{ email: email(), metadata: { ['k'.repeat(41)]: 'v' } }, `body.metadata.${'k'.repeat(41)}`],
      [{ email: email(), metadata: { k: 'v'.repeat(501) } }, 'body.metadata.k'],
      [{ email: email(), organization_id: b.organization.id }, 'body.organization_id'],
    ];
    for (const [body, loc] of cases) {
      const res = await call(srv.url, a.token, 'POST', '/v1/customers/', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.error).toBe('RequestValidationError');
      expect(locs(res.body), JSON.stringify(body).slice(0, 80)).toContain(loc);
    }
  });

  it('401 without a token, 403 without the scope', async () => {
    const anon = await call(srv.url, null, 'GET', '/v1/customers/');
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('Unauthorized');
    const readOnly = await sellerWithSdk(srv, ['customers:read']);
    const res = await call(srv.url, readOnly.token, 'POST', '/v1/customers/', { email: email() });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
    expect((await call(srv.url, readOnly.token, 'GET', '/v1/customers/')).status).toBe(200);
  });

  it("another organization's customers are 404 and absent from lists", async () => {
    const ext = `ext-${rand()}`;
    const c = await a.polar.customers.create({ email: email(), externalId: ext });
    for (const [method, path] of [
      ['GET', `/v1/customers/${c.id}`],
      ['PATCH', `/v1/customers/${c.id}`],
      ['DELETE', `/v1/customers/${c.id}`],
      ['GET', `/v1/customers/${c.id}/state`],
      ['GET', `/v1/customers/external/${ext}`],
      ['PATCH', `/v1/customers/external/${ext}`],
      ['DELETE', `/v1/customers/external/${ext}`],
      ['GET', `/v1/customers/external/${ext}/state`],
    ] as const) {
      const res = await call(srv.url, b.token, method, path, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error).toBe('ResourceNotFound');
    }
    await expect(b.polar.customers.get({ id: c.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await b.polar.customers.list({ organizationId: a.organization.id })).result.items).toEqual([]);
    expect((await b.polar.customers.list({ email: c.email })).result.items).toEqual([]);
    expect((await a.polar.customers.get({ id: c.id })).name).toBeNull();
  });
});
