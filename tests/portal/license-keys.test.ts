/**
 * License keys in the customer portal through `@polar-sh/sdk` 0.29.3: the customer's list and detail
 * (another customer's key is 404), and the public validate / activate / deactivate calls with their
 * limits (activation limit 403, usage limit 400, unknown key 404, deactivated activation 404).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { NotPermitted } from '@polar-sh/sdk/models/errors/notpermitted.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKError } from '@polar-sh/sdk/models/errors/sdkerror.js';
import { LicenseKey, LicenseKeyActivation } from '../../api/src/modules/license-keys/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, type SellerB } from '../catalogue/helpers-b.ts';
import { insertLicenseKey, portalCustomer, portalSeller, type PortalCustomer } from './helpers.ts';

let srv: TestServer;
let anonymous: Polar;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  anonymous = new Polar({ serverURL: srv.url });
});
afterAll(async () => {
  await srv?.close();
});

async function licenseBenefit(s: SellerB, properties: Record<string, unknown>) {
  const r = await s.call('POST', '/v1/benefits/', {
    type: 'license_keys',
    description: 'License',
    properties: { prefix: null, expires: null, activations: null, limit_usage: null, ...properties },
  });
  expect(r.status).toBe(201);
  return r.body.id as string;
}

async function setKey(id: string, changes: Partial<Pick<LicenseKey, 'status' | 'expiresAt' | 'limitActivations'>>) {
  const em = srv.deps.orm.em.fork();
  const key = await em.findOneOrFail(LicenseKey, { id });
  Object.assign(key, changes);
  await em.flush();
}

describe('the customer’s license keys', () => {
  it('lists and reads the customer’s own keys only; another customer’s key is 404', async () => {
    const s = await portalSeller(srv);
    const me = await portalCustomer(srv, s);
    const other = await portalCustomer(srv, s);
    const benefitA = await licenseBenefit(s, { activations: { limit: 3, enable_customer_admin: true } });
    const benefitB = await licenseBenefit(s, {});
    const k1 = await insertLicenseKey(srv, me.id, benefitA);
    const k2 = await insertLicenseKey(srv, me.id, benefitB);
    const foreign = await insertLicenseKey(srv, other.id, benefitA);

    const page = await me.polar.customerPortal.licenseKeys.list(me.security, {});
    expect(page.result.items.map((k) => k.id).sort()).toEqual([k1.id, k2.id].sort());
    expect(page.result.pagination).toEqual({ totalCount: 2, maxPage: 1 });
    const filtered = await me.polar.customerPortal.licenseKeys.list(me.security, { benefitId: benefitB });
    expect(filtered.result.items.map((k) => k.id)).toEqual([k2.id]);
    const byOrg = await me.polar.customerPortal.licenseKeys.list(me.security, { organizationId: s.organization.id });
    expect(byOrg.result.pagination.totalCount).toBe(2);

    await anonymous.customerPortal.licenseKeys.activate({ key: k1.key, organizationId: s.organization.id, label: 'laptop' });
    const detail = await me.polar.customerPortal.licenseKeys.get(me.security, { id: k1.id });
    expect(detail).toMatchObject({ id: k1.id, key: k1.key, customerId: me.id, limitActivations: 3 });
    expect(detail.activations.map((a) => a.label)).toEqual(['laptop']);

    await expect(me.polar.customerPortal.licenseKeys.get(me.security, { id: foreign.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const raw = await call(srv.url, me.token, 'GET', `/v1/customer-portal/license-keys/${foreign.id}`);
    expect(raw).toMatchObject({ status: 404, body: { error: 'ResourceNotFound' } });
    expect((await call(srv.url, null, 'GET', '/v1/customer-portal/license-keys/')).status).toBe(401);
  });
});

describe('public license key calls', () => {
  let s: SellerB;
  let me: PortalCustomer;
  beforeAll(async () => {
    s = await portalSeller(srv);
    me = await portalCustomer(srv, s);
  });

  it('activates up to the limit (then 403), validates with the activation and its conditions, deactivates', async () => {
    const benefitId = await licenseBenefit(s, { activations: { limit: 2, enable_customer_admin: true } });
    const key = await insertLicenseKey(srv, me.id, benefitId);
    const org = s.organization.id;

    // The SDK 0.29.3 strips `conditions` and `meta` (its schemas for them are empty objects): raw HTTP sends them.
    const activated = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/activate', {
      key: key.key,
      organization_id: org,
      label: 'laptop',
      conditions: { machine: 'abc' },
      meta: { os: 'linux' },
    });
    expect(activated.status).toBe(200);
    expect(activated.body).toMatchObject({ license_key_id: key.id, label: 'laptop', meta: { os: 'linux' }, modified_at: null });
    const a1 = { id: activated.body.id as string, licenseKey: activated.body.license_key as { id: string } };
    expect(a1.licenseKey.id).toBe(key.id);
    const a2 = await anonymous.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org, label: 'desktop' });
    const full = anonymous.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org, label: 'third' });
    await expect(full).rejects.toBeInstanceOf(NotPermitted);
    const rawFull = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/activate', {
      key: key.key,
      organization_id: org,
      label: 'third',
    });
    expect(rawFull.body).toEqual({ error: 'NotPermitted', detail: 'License key activation limit already reached' });

    // The activation's conditions must match; an activation without conditions matches anything.
    const validateRaw = (body: Record<string, unknown>) =>
      call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/validate', { key: key.key, organization_id: org, ...body });
    const ok = await validateRaw({ activation_id: a1.id, conditions: { machine: 'abc' } });
    expect(ok.status).toBe(200);
    expect(ok.body.activation).toMatchObject({ id: a1.id, label: 'laptop', meta: { os: 'linux' } });
    expect(ok.body.validations).toBe(1);
    expect(ok.body.last_validated_at).toEqual(expect.any(String));
    const wrong = await validateRaw({ activation_id: a1.id, conditions: { machine: 'xyz' } });
    expect(wrong.body).toEqual({ error: 'ResourceNotFound', detail: 'License key does not match required conditions' });
    await expect(
      anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, activationId: a1.id }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    const sdkValidated = await anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, activationId: a2.id });
    expect(sdkValidated.activation).toMatchObject({ id: a2.id, label: 'desktop' });
    expect(sdkValidated.validations).toBe(2);
    expect(sdkValidated.lastValidatedAt).toBeInstanceOf(Date);

    // Deactivate: 204, then that activation no longer validates, nor deactivates again; a slot is free.
    await anonymous.customerPortal.licenseKeys.deactivate({ key: key.key, organizationId: org, activationId: a1.id });
    const rawDeactivate = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/deactivate', {
      key: key.key,
      organization_id: org,
      activation_id: a2.id,
    });
    expect(rawDeactivate.status).toBe(204);
    expect((await validateRaw({ activation_id: a1.id, conditions: { machine: 'abc' } })).body).toEqual({
      error: 'ResourceNotFound',
      detail: 'License key activation not found.',
    });
    await expect(
      anonymous.customerPortal.licenseKeys.deactivate({ key: key.key, organizationId: org, activationId: a1.id }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    const a3 = await anonymous.customerPortal.licenseKeys.activate({ key: key.key, organizationId: org, label: 'third' });
    expect(a3.label).toBe('third');
    // Deactivated rows are kept (soft delete) but not listed.
    const rows = await srv.deps.orm.em.fork().find(LicenseKeyActivation, { licenseKey: key.id });
    expect(rows).toHaveLength(3);
    expect(rows.filter((r) => r.deletedAt != null).map((r) => r.id).sort()).toEqual([a1.id, a2.id].sort());
    const detail = await me.polar.customerPortal.licenseKeys.get(me.security, { id: key.id });
    expect(detail.activations.map((a) => a.id)).toEqual([a3.id]);
  });

  it('refuses activations when the key takes none (403)', async () => {
    const key = await insertLicenseKey(srv, me.id, await licenseBenefit(s, {}));
    await expect(
      anonymous.customerPortal.licenseKeys.activate({ key: key.key, organizationId: s.organization.id, label: 'x' }),
    ).rejects.toBeInstanceOf(NotPermitted);
    await setKey(key.id, { limitActivations: 0 });
    const raw = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/activate', {
      key: key.key,
      organization_id: s.organization.id,
      label: 'x',
    });
    expect(raw.body).toEqual({ error: 'NotPermitted', detail: 'This license key does not support activations.' });
  });

  it('never exceeds the activation limit under concurrent activations', async () => {
    const key = await insertLicenseKey(srv, me.id, await licenseBenefit(s, { activations: { limit: 3, enable_customer_admin: true } }));
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/activate', {
          key: key.key,
          organization_id: s.organization.id,
          label: `machine-${i}`,
        }),
      ),
    );
    expect(results.filter((r) => r.status === 200)).toHaveLength(3);
    expect(results.filter((r) => r.status === 403)).toHaveLength(7);
    expect(await srv.deps.orm.em.fork().count(LicenseKeyActivation, { licenseKey: key.id, deletedAt: null })).toBe(3);
  });

  it('counts usage up to limit_usage; beyond it is a 400', async () => {
    const key = await insertLicenseKey(srv, me.id, await licenseBenefit(s, { limit_usage: 5 }));
    const org = s.organization.id;
    const v1 = await anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, incrementUsage: 3 });
    expect(v1).toMatchObject({ usage: 3, limitUsage: 5, validations: 1, activation: null });
    const tooMuch = anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, incrementUsage: 3 });
    await expect(tooMuch).rejects.toBeInstanceOf(SDKError);
    await expect(tooMuch).rejects.toMatchObject({ statusCode: 400 });
    const raw = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/validate', {
      key: key.key,
      organization_id: org,
      increment_usage: 3,
    });
    expect(raw).toMatchObject({ status: 400, body: { error: 'BadRequest', detail: 'License key only has 2 more usages.' } });
    const v2 = await anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, incrementUsage: 2 });
    expect(v2).toMatchObject({ usage: 5, validations: 2 });
    // Plain validations keep working at the limit.
    expect((await anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org })).validations).toBe(3);
  });

  it('answers 404 for unknown keys, other organizations, mismatched benefit or customer, inactive or expired keys', async () => {
    const benefitId = await licenseBenefit(s, {});
    const key = await insertLicenseKey(srv, me.id, benefitId);
    const org = s.organization.id;
    const validate = (req: Partial<Parameters<typeof anonymous.customerPortal.licenseKeys.validate>[0]>) =>
      anonymous.customerPortal.licenseKeys.validate({ key: key.key, organizationId: org, ...req });

    await expect(validate({ key: 'NOT-A-KEY' })).rejects.toBeInstanceOf(ResourceNotFound);
    const other = await portalSeller(srv);
    await expect(validate({ organizationId: other.organization.id })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(validate({ benefitId: '00000000-0000-4000-8000-000000000001' })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(validate({ customerId: '00000000-0000-4000-8000-000000000001' })).rejects.toBeInstanceOf(ResourceNotFound);
    await expect(validate({ activationId: '00000000-0000-4000-8000-000000000001' })).rejects.toBeInstanceOf(ResourceNotFound);
    const matching = await validate({ benefitId, customerId: me.id });
    expect(matching).toMatchObject({ id: key.id, benefitId, customerId: me.id });

    await setKey(key.id, { expiresAt: new Date(Date.now() - 1000) });
    await expect(validate({})).rejects.toBeInstanceOf(ResourceNotFound);
    await setKey(key.id, { expiresAt: null, status: 'revoked' });
    const revoked = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/validate', { key: key.key, organization_id: org });
    expect(revoked.body).toEqual({ error: 'ResourceNotFound', detail: 'License key is no longer active.' });
    await setKey(key.id, { status: 'granted' });
    expect((await validate({})).validations).toBe(2);

    const unknown = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/activate', {
      key: 'NOT-A-KEY',
      organization_id: org,
      label: 'x',
    });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'ResourceNotFound' } });
    const missing = await call(srv.url, null, 'POST', '/v1/customer-portal/license-keys/validate', { key: key.key });
    expect(missing.status).toBe(422);
    expect(missing.body.detail[0].loc).toEqual(['body', 'organization_id']);
  });
});
