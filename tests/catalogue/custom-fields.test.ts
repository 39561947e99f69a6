/** /v1/custom-fields: contract through `@polar-sh/sdk` 0.29.3, raw error bodies, tenant isolation. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, locs, sellerB } from './helpers-b.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

describe('custom fields through the SDK', () => {
  it('creates every type and reads each back with its properties', async () => {
    const s = await sellerB(srv);
    const text = await s.polar.customFields.create({
      type: 'text',
      slug: 'Company-Name',
      name: 'Company name',
      properties: { formLabel: 'Company', formHelpText: 'As on invoices', formPlaceholder: 'Acme', textarea: false, minLength: 2, maxLength: 80 },
      metadata: { source: 'test', rank: 2, visible: true },
    });
    expect(text).toMatchObject({
      type: 'text',
      slug: 'company-name',
      name: 'Company name',
      organizationId: s.organization.id,
      metadata: { source: 'test', rank: 2, visible: true },
      properties: { formLabel: 'Company', formHelpText: 'As on invoices', formPlaceholder: 'Acme', textarea: false, minLength: 2, maxLength: 80 },
    });
    expect(text.createdAt).toBeInstanceOf(Date);
    expect(text.modifiedAt).toBeNull();

    const number = await s.polar.customFields.create({ type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1, le: 500 } });
    expect(number).toMatchObject({ type: 'number', properties: { ge: 1, le: 500 } });
    const date = await s.polar.customFields.create({ type: 'date', slug: 'start', name: 'Start date', properties: { formLabel: 'Start' } });
    expect(date).toMatchObject({ type: 'date', properties: { formLabel: 'Start' } });
    const checkbox = await s.polar.customFields.create({ type: 'checkbox', slug: 'tos', name: 'Terms', properties: {} });
    expect(checkbox).toMatchObject({ type: 'checkbox', properties: {} });
    const select = await s.polar.customFields.create({
      type: 'select',
      slug: 'size',
      name: 'Team size',
      properties: { options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] },
    });
    expect(select).toMatchObject({ type: 'select', properties: { options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] } });

    const got = await s.polar.customFields.get({ id: select.id });
    expect(got).toEqual(select);

    // Default order is by slug; filters by type and by text in name or slug.
    const all = await s.polar.customFields.list({});
    expect(all.result.items.map((f) => f.slug)).toEqual(['company-name', 'seats', 'size', 'start', 'tos']);
    expect(all.result.pagination).toEqual({ totalCount: 5, maxPage: 1 });
    const byType = await s.polar.customFields.list({ typeFilter: ['number', 'select'], sorting: ['-name'] });
    expect(byType.result.items.map((f) => f.slug)).toEqual(['size', 'seats']);
    const byQuery = await s.polar.customFields.list({ query: 'star' });
    expect(byQuery.result.items.map((f) => f.slug)).toEqual(['start']);
    const byOrg = await s.polar.customFields.list({ organizationId: s.organization.id, sorting: ['type'], limit: 2, page: 2 });
    expect(byOrg.result.items.map((f) => f.type)).toEqual(['number', 'select']);
    expect(byOrg.result.pagination).toEqual({ totalCount: 5, maxPage: 3 });
  });

  it('updates name, slug, properties and metadata, and deletes (204, then 404)', async () => {
    const s = await sellerB(srv);
    const field = await s.polar.customFields.create({ type: 'text', slug: 'nick', name: 'Nickname', properties: { maxLength: 10 } });
    const updated = await s.polar.customFields.update({
      id: field.id,
      customFieldUpdate: { type: 'text', name: 'Handle', slug: 'handle', properties: { textarea: true }, metadata: { v: 2 } },
    });
    expect(updated).toMatchObject({ id: field.id, name: 'Handle', slug: 'handle', properties: { textarea: true }, metadata: { v: 2 } });
    expect(updated.properties).not.toHaveProperty('maxLength');
    expect(updated.modifiedAt).toBeInstanceOf(Date);

    await expect(s.polar.customFields.delete({ id: field.id })).resolves.toBeUndefined();
    await expect(s.polar.customFields.get({ id: field.id })).rejects.toBeInstanceOf(ResourceNotFound);
    expect((await s.polar.customFields.list({})).result.items).toEqual([]);
    // The slug of a deleted field is free again.
    const again = await s.polar.customFields.create({ type: 'checkbox', slug: 'handle', name: 'Again', properties: {} });
    expect(again.slug).toBe('handle');
  });

  it('refuses a taken slug with a typed 422', async () => {
    const s = await sellerB(srv);
    await s.polar.customFields.create({ type: 'checkbox', slug: 'vip', name: 'VIP', properties: {} });
    const err = await s.polar.customFields
      .create({ type: 'text', slug: 'VIP', name: 'Other', properties: {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HTTPValidationError);
    expect((err as HTTPValidationError).detail?.[0]).toMatchObject({ loc: ['body', 'slug'], type: 'value_error' });
  });
});

describe('custom fields over raw HTTP', () => {
  it('answers 401 without a token and 403 without the write scope', async () => {
    const none = await call(srv.url, null, 'GET', '/v1/custom-fields/');
    expect(none.status).toBe(401);
    expect(none.body).toEqual({ error: 'Unauthorized', detail: 'Unauthorized' });
    expect(none.headers.get('www-authenticate')).toBe('Bearer');

    const reader = await sellerB(srv, ['custom_fields:read']);
    const denied = await reader.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'x', name: 'X', properties: {} });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'NotPermitted', detail: 'Missing scope: custom_fields:write' });
    expect((await reader.call('GET', '/v1/custom-fields/')).status).toBe(200);
    const productsOnly = await sellerB(srv, ['products:read']);
    expect((await productsOnly.call('GET', '/v1/custom-fields/')).status).toBe(403);
  });

  it('answers 404 for unknown ids and 422 on malformed ids', async () => {
    const s = await sellerB(srv);
    const missing = await s.call('GET', '/v1/custom-fields/6f1d1f6e-3b0c-4c55-9d2e-2f0d2a9b8a11');
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'ResourceNotFound', detail: 'Custom field not found' });
    const bad = await s.call('GET', '/v1/custom-fields/nope');
    expect(bad.status).toBe(422);
    expect(locs(bad)).toEqual([['path', 'id']]);
  });

  it('validates properties per type', async () => {
    const s = await sellerB(srv);
    const noOptions = await s.call('POST', '/v1/custom-fields/', { type: 'select', slug: 'a', name: 'A', properties: { options: [] } });
    expect(noOptions.status).toBe(422);
    expect(locs(noOptions)).toEqual([['body', 'properties', 'options']]);
    const bounds = await s.call('POST', '/v1/custom-fields/', { type: 'number', slug: 'b', name: 'B', properties: { ge: 10, le: 1 } });
    expect(locs(bounds)).toEqual([['body', 'properties', 'le']]);
    const float = await s.call('POST', '/v1/custom-fields/', { type: 'number', slug: 'c', name: 'C', properties: { ge: 1.5 } });
    expect(locs(float)).toEqual([['body', 'properties', 'ge']]);
    const slug = await s.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'has space', name: 'D', properties: {} });
    expect(locs(slug)).toEqual([['body', 'slug']]);
    const type = await s.call('POST', '/v1/custom-fields/', { type: 'color', slug: 'e', name: 'E', properties: {} });
    expect(locs(type)).toEqual([['body', 'type']]);
    const metadata = await s.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'f', name: 'F', properties: {}, metadata: { n: 1.5 } });
    expect(locs(metadata)[0]!.slice(0, 3)).toEqual(['body', 'metadata', 'n']);
  });

  it('refuses changing the type, and a slug another field uses', async () => {
    const s = await sellerB(srv);
    const a = await s.call('POST', '/v1/custom-fields/', { type: 'text', slug: 'first', name: 'First', properties: {} });
    await s.call('POST', '/v1/custom-fields/', { type: 'text', slug: 'second', name: 'Second', properties: {} });
    const retype = await s.call('PATCH', `/v1/custom-fields/${a.body.id}`, { type: 'number', name: 'Now a number' });
    expect(retype.status).toBe(422);
    expect(retype.body.detail).toEqual([expect.objectContaining({ loc: ['body', 'type'], msg: "The type of a custom field can't be changed." })]);
    const taken = await s.call('PATCH', `/v1/custom-fields/${a.body.id}`, { type: 'text', slug: 'second' });
    expect(taken.status).toBe(422);
    expect(locs(taken)).toEqual([['body', 'slug']]);
    // Nothing changed.
    const still = await s.call('GET', `/v1/custom-fields/${a.body.id}`);
    expect(still.body).toMatchObject({ type: 'text', slug: 'first', name: 'First' });
    expect((await s.call('DELETE', `/v1/custom-fields/${a.body.id}`)).status).toBe(204);
  });
});

describe('concurrent creates', () => {
  it('lets exactly one of several simultaneous creates take a slug', async () => {
    const s = await sellerB(srv);
    const replies = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        s.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'race', name: `Racer ${i}`, properties: {} }),
      ),
    );
    expect(replies.map((r) => r.status).sort()).toEqual([201, 422, 422, 422, 422]);
    for (const r of replies.filter((x) => x.status === 422)) expect(locs(r)).toEqual([['body', 'slug']]);
    expect((await s.call('GET', '/v1/custom-fields/')).body.pagination.total_count).toBe(1);
  });
});

describe('tenant isolation', () => {
  it("never shows, changes or deletes another organization's custom fields", async () => {
    const a = await sellerB(srv);
    const b = await sellerB(srv);
    const field = await a.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'shared-slug', name: 'A only', properties: {} });
    expect(field.status).toBe(201);
    expect((await b.call('GET', `/v1/custom-fields/${field.body.id}`)).status).toBe(404);
    expect((await b.call('PATCH', `/v1/custom-fields/${field.body.id}`, { type: 'checkbox', name: 'Hijack' })).status).toBe(404);
    expect((await b.call('DELETE', `/v1/custom-fields/${field.body.id}`)).status).toBe(404);
    const list = await b.call('GET', `/v1/custom-fields/?organization_id=${a.organization.id}`);
    expect(list.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    // Slugs are unique per organization only.
    expect((await b.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'shared-slug', name: 'B', properties: {} })).status).toBe(201);
    // Naming the other organization with an organization token is refused.
    const cross = await b.call('POST', '/v1/custom-fields/', {
      type: 'checkbox', slug: 'x', name: 'X', properties: {}, organization_id: a.organization.id,
    });
    expect(locs(cross)).toEqual([['body', 'organization_id']]);
    expect((await a.call('GET', `/v1/custom-fields/${field.body.id}`)).body.name).toBe('A only');
  });
});
