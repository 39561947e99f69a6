/**
 * License keys: issuing (key format, limits from the benefit), the seller routes through
 * `@polar-sh/sdk` 0.29.3, raw error bodies, the license_keys benefit strategy, tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { Benefit } from '../../api/src/modules/benefits/entities.ts';
import { benefitStrategies } from '../../api/src/modules/benefits/types/index.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { LicenseKey, LicenseKeyActivation } from '../../api/src/modules/license-keys/entities.ts';
import { addTimeframe, displayKey, generateLicenseKey, issueLicenseKey } from '../../api/src/modules/license-keys/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, insertCustomer, locs, sellerB, type SellerB } from './helpers-b.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

const UUID_UPPER = /^[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/;

/** A license_keys benefit (over HTTP) and a key issued for a new customer (through the service). */
async function issued(s: SellerB, properties: Record<string, unknown> = {}) {
  const benefit = await s.call('POST', '/v1/benefits/', { type: 'license_keys', description: 'License', properties });
  expect(benefit.status).toBe(201);
  const customer = await insertCustomer(srv, s.organization.id);
  const em = srv.deps.orm.em.fork();
  const key = issueLicenseKey(em, {
    customer: await em.findOneOrFail(Customer, { id: customer.id }),
    benefit: await em.findOneOrFail(Benefit, { id: benefit.body.id }),
  });
  await em.flush();
  return { benefitId: benefit.body.id as string, customer, key };
}

async function activate(keyId: string, label: string, deleted = false) {
  const em = srv.deps.orm.em.fork();
  const a = em.create(LicenseKeyActivation, {
    licenseKey: keyId,
    label,
    meta: { host: label },
    conditions: {},
    deletedAt: deleted ? new Date() : null,
  });
  await em.flush();
  return a;
}

describe('issuing keys', () => {
  it('formats keys as PREFIX-UUID4 upper-cased, display key ****-last6', () => {
    expect(generateLicenseKey()).toMatch(UUID_UPPER);
    const k = generateLicenseKey(' acme ');
    expect(k.startsWith('ACME-')).toBe(true);
    expect(k.slice(5)).toMatch(UUID_UPPER);
    expect(displayKey('ACME-1234-ABCDEF')).toBe('****-ABCDEF');
  });

  it('adds calendar years, months (clamped to month end) and days', () => {
    const jan31 = new Date('2025-01-31T10:00:00Z');
    expect(addTimeframe(jan31, 1, 'month').toISOString()).toBe('2025-02-28T10:00:00.000Z');
    expect(addTimeframe(new Date('2024-01-31T00:00:00Z'), 1, 'month').toISOString()).toBe('2024-02-29T00:00:00.000Z');
    expect(addTimeframe(new Date('2024-02-29T00:00:00Z'), 1, 'year').toISOString()).toBe('2025-02-28T00:00:00.000Z');
    expect(addTimeframe(jan31, 30, 'day').toISOString()).toBe('2025-03-02T10:00:00.000Z');
    expect(addTimeframe(jan31, 13, 'month').toISOString()).toBe('2026-02-28T10:00:00.000Z');
  });

  it('copies the benefit prefix and limits onto the key', async () => {
    const s = await sellerB(srv);
    const before = Date.now();
    const { key, benefitId } = await issued(s, {
      prefix: 'pro',
      expires: { ttl: 10, timeframe: 'day' },
      activations: { limit: 2, enable_customer_admin: false },
      limit_usage: 50,
    });
    expect(key.key).toMatch(/^PRO-[0-9A-F-]{36}$/);
    expect(key.displayKey).toBe(`****-${key.key.slice(-6)}`);
    expect(key).toMatchObject({ status: 'granted', limitActivations: 2, limitUsage: 50, usage: 0, validations: 0 });
    expect(key.organization.id).toBe(s.organization.id);
    expect(key.benefit.id).toBe(benefitId);
    const days = (key.expiresAt!.getTime() - before) / 86_400_000;
    expect(days).toBeGreaterThan(9.99);
    expect(days).toBeLessThan(10.01);

    const plain = await issued(s);
    expect(plain.key.key).toMatch(UUID_UPPER);
    expect(plain.key).toMatchObject({ limitActivations: null, limitUsage: null, expiresAt: null });
  });

  it('grants and revokes through the license_keys benefit strategy', async () => {
    const s = await sellerB(srv);
    const benefit = await s.call('POST', '/v1/benefits/', { type: 'license_keys', description: 'Keys', properties: { prefix: 'st', limit_usage: 3 } });
    const customer = await insertCustomer(srv, s.organization.id);
    const em = srv.deps.orm.em.fork();
    const input = {
      benefit: await em.findOneOrFail(Benefit, { id: benefit.body.id }),
      customer: await em.findOneOrFail(Customer, { id: customer.id }),
    };
    const granted = await benefitStrategies.license_keys.grant({ em }, { ...input, grantProperties: {} });
    expect(granted).toEqual({ license_key_id: expect.any(String), display_key: expect.stringMatching(/^\*\*\*\*-[0-9A-F]{6}$/) });
    await benefitStrategies.license_keys.revoke({ em }, { ...input, grantProperties: granted });
    const check = srv.deps.orm.em.fork();
    expect((await check.findOneOrFail(LicenseKey, { id: granted.license_key_id as string })).status).toBe('revoked');
    // Granting again re-enables the same key rather than issuing another.
    const again = await benefitStrategies.license_keys.grant({ em }, { ...input, grantProperties: granted, update: true });
    expect(again.license_key_id).toBe(granted.license_key_id);
    expect((await srv.deps.orm.em.fork().findOneOrFail(LicenseKey, { id: granted.license_key_id as string })).status).toBe('granted');
    expect(await srv.deps.orm.em.fork().count(LicenseKey, { customer: customer.id })).toBe(1);
  });
});

describe('license keys through the SDK', () => {
  it('lists, filters by benefit, reads with activations, updates and reads an activation', async () => {
    const s = await sellerB(srv);
    const first = await issued(s, { prefix: 'one', activations: { limit: 5, enable_customer_admin: true } });
    const second = await issued(s);

    const list = await s.polar.licenseKeys.list({ organizationId: s.organization.id });
    expect(list.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const byBenefit = await s.polar.licenseKeys.list({ benefitId: first.benefitId });
    expect(byBenefit.result.items).toHaveLength(1);
    const item = byBenefit.result.items[0]!;
    expect(item).toMatchObject({
      id: first.key.id,
      organizationId: s.organization.id,
      customerId: first.customer.id,
      userId: first.customer.id,
      benefitId: first.benefitId,
      key: first.key.key,
      displayKey: first.key.displayKey,
      status: 'granted',
      limitActivations: 5,
      usage: 0,
      limitUsage: null,
      validations: 0,
      lastValidatedAt: null,
      expiresAt: null,
      customer: { id: first.customer.id, email: first.customer.email },
      user: { id: first.customer.id, email: first.customer.email, publicName: 'Bea Buyer' },
    });
    const paged = await s.polar.licenseKeys.list({ limit: 1, page: 2 });
    expect(paged.result.items.map((k) => k.id)).toEqual([first.key.id]);

    const live = await activate(first.key.id, 'laptop');
    await activate(first.key.id, 'old-desktop', true);
    const detail = await s.polar.licenseKeys.get({ id: first.key.id });
    expect(detail.activations).toHaveLength(1);
    expect(detail.activations[0]).toMatchObject({ id: live.id, licenseKeyId: first.key.id, label: 'laptop' });
    expect(detail.activations[0]!.createdAt).toBeInstanceOf(Date);

    const activation = await s.polar.licenseKeys.getActivation({ id: first.key.id, activationId: live.id });
    expect(activation).toMatchObject({ id: live.id, label: 'laptop', licenseKey: { id: first.key.id, key: first.key.key } });

    const expiresAt = new Date('2031-06-30T12:00:00Z');
    const updated = await s.polar.licenseKeys.update({
      id: second.key.id,
      licenseKeyUpdate: { status: 'disabled', usage: 7, limitActivations: 3, limitUsage: 10, expiresAt },
    });
    expect(updated).toMatchObject({ status: 'disabled', usage: 7, limitActivations: 3, limitUsage: 10, expiresAt });
    // The SDK always sends usage (default 0); limits can be cleared with null.
    const cleared = await s.polar.licenseKeys.update({ id: second.key.id, licenseKeyUpdate: { status: 'granted', limitUsage: null, expiresAt: null } });
    expect(cleared).toMatchObject({ status: 'granted', usage: 0, limitActivations: 3, limitUsage: null, expiresAt: null });
    expect((await s.polar.licenseKeys.get({ id: second.key.id })).status).toBe('granted');
  });

  it('answers 404 for deactivated or unknown activations', async () => {
    const s = await sellerB(srv);
    const { key } = await issued(s, { activations: { limit: 2, enable_customer_admin: false } });
    const gone = await activate(key.id, 'gone', true);
    await expect(s.polar.licenseKeys.getActivation({ id: key.id, activationId: gone.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const raw = await s.call('GET', `/v1/license-keys/${key.id}/activations/${gone.id}`);
    expect(raw.body).toEqual({ error: 'ResourceNotFound', detail: 'License key activation not found' });
    // An activation of another key of the same organization does not answer under this key.
    const other = await issued(s);
    const elsewhere = await activate(other.key.id, 'elsewhere');
    expect((await s.call('GET', `/v1/license-keys/${key.id}/activations/${elsewhere.id}`)).status).toBe(404);
  });
});

describe('license keys over raw HTTP', () => {
  it('answers 401, 403 and 404', async () => {
    expect((await call(srv.url, null, 'GET', '/v1/license-keys')).status).toBe(401);
    const s = await sellerB(srv);
    const { key } = await issued(s);
    const reader = await sellerB(srv, ['license_keys:read']);
    const denied = await reader.call('PATCH', `/v1/license-keys/${key.id}`, { status: 'revoked' });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'NotPermitted', detail: 'Missing scope: license_keys:write' });
    const missing = await s.call('GET', '/v1/license-keys/2b7c1a9d-3e4f-4a5b-8c6d-7e8f9a0b1c2d');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'ResourceNotFound', detail: 'License key not found' });
    // Trailing slash form works too.
    expect((await s.call('GET', '/v1/license-keys/')).body.pagination.total_count).toBe(1);
  });

  it('validates updates and changes only the keys sent', async () => {
    const s = await sellerB(srv);
    const { key } = await issued(s, { limit_usage: 9, activations: { limit: 2, enable_customer_admin: false } });
    const patch = (body: unknown) => s.call('PATCH', `/v1/license-keys/${key.id}`, body);
    expect(locs(await patch({ limit_activations: 51 }))).toEqual([['body', 'limit_activations']]);
    expect(locs(await patch({ limit_usage: 0 }))).toEqual([['body', 'limit_usage']]);
    expect(locs(await patch({ usage: -1 }))).toEqual([['body', 'usage']]);
    expect(locs(await patch({ status: 'expired' }))).toEqual([['body', 'status']]);
    expect(locs(await patch({ expires_at: '2030-01-01T00:00:00' }))).toEqual([['body', 'expires_at']]);
    const ok = await patch({ status: 'revoked' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ status: 'revoked', usage: 0, limit_usage: 9, limit_activations: 2 });
    expect(ok.body).not.toHaveProperty('created_at');
  });
});

describe('tenant isolation', () => {
  it("never shows or changes another organization's license keys", async () => {
    const a = await sellerB(srv);
    const b = await sellerB(srv);
    const { key, benefitId } = await issued(a);
    const act = await activate(key.id, 'a-machine');
    expect((await b.call('GET', `/v1/license-keys/${key.id}`)).status).toBe(404);
    expect((await b.call('PATCH', `/v1/license-keys/${key.id}`, { status: 'revoked' })).status).toBe(404);
    expect((await b.call('GET', `/v1/license-keys/${key.id}/activations/${act.id}`)).status).toBe(404);
    const byOrg = await b.call('GET', `/v1/license-keys?organization_id=${a.organization.id}`);
    expect(byOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    const byBenefit = await b.call('GET', `/v1/license-keys?benefit_id=${benefitId}`);
    expect(byBenefit.body.items).toEqual([]);
    expect((await a.call('GET', `/v1/license-keys/${key.id}`)).body.status).toBe('granted');
  });
});
