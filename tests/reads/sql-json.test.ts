/**
 * The product and benefit reads are built by PostgreSQL (`products/read-sql.ts`,
 * `benefits/read-sql.ts`); the write responses, webhooks and other reads still come from the
 * TypeScript serializers. On a varied catalogue, every read of the SQL path must be deep-equal to what
 * the serializers make of the same rows (by id, and lists under every filter and sorting).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { File } from '../../api/src/modules/files/entities.ts';
import { CustomField } from '../../api/src/modules/custom-fields/entities.ts';
import { Benefit } from '../../api/src/modules/benefits/entities.ts';
import { serializeBenefit } from '../../api/src/modules/benefits/schemas.ts';
import { Product } from '../../api/src/modules/products/entities.ts';
import { PRODUCT_POPULATE, serializeProduct } from '../../api/src/modules/products/schemas.ts';
import { listProductIds } from '../../api/src/modules/products/service.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
let other: Awaited<ReturnType<typeof seller>>;
const SCOPES = ['products:read', 'products:write', 'benefits:read', 'benefits:write', 'meters:read', 'meters:write', 'custom_fields:read', 'custom_fields:write'];

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, type: res.headers.get('content-type'), body: await json(res) };
}

/** Rows written directly, so that stored shapes the API would not write itself are covered too. */
async function insertRows(orgId: string) {
  const em = srv.deps.orm.em.fork();
  const org = em.getReference(Organization, orgId);
  const file = (name: string, path: string, size: number, extra: Partial<File> = {}) =>
    em.create(File, {
      id: randomUUID(),
      organization: org,
      name,
      path,
      mimeType: 'image/png',
      size,
      service: 'product_media',
      version: null,
      uploadId: null,
      storageVersion: null,
      checksumEtag: null,
      checksumSha256Base64: null,
      checksumSha256Hex: null,
      lastModifiedAt: null,
      isUploaded: true,
      isEnabled: true,
      deletedAt: null,
      ...extra,
    });
  const files = [
    file('zero.png', `${orgId}/a/zero.png`, 0),
    file('kb.png', `${orgId}/b/Ünïcödé name (1) & more?#%.png`, 1280, { version: 'v2', checksumEtag: 'etag', lastModifiedAt: new Date('2026-01-02T03:04:05.678Z') }),
    file('mb.png', `${orgId}/c/big file.png`, 5 * 1024 * 1024 + 123_456, { checksumSha256Hex: 'ab', checksumSha256Base64: 'qw==', storageVersion: 's1' }),
    file('gb.png', `${orgId}/d/huge~*'().png`, 3 * 1024 ** 3 + 7, { modifiedAt: new Date('2026-03-04T05:06:07.089Z') }),
    file('edge.png', `${orgId}/e/edge.png`, 1023),
  ];
  const benefit = (type: Benefit['type'], description: string, properties: Record<string, unknown>, extra: Partial<Benefit> = {}) =>
    em.create(Benefit, { id: randomUUID(), organization: org, type, description, properties, isTaxApplicable: false, selectable: true, deletable: true, deletedAt: null, ...extra });
  const benefits = [
    benefit('custom', 'Custom with a note', { note: 'Thanks!' }, { isTaxApplicable: true }),
    benefit('custom', 'Custom without a note', {}),
    benefit('discord', 'Discord role', { guild_id: 'g1', role_id: 'r1', guild_token: 'secret' }),
    benefit('downloadables', 'Downloads', { files: ['f1', 'f2', 'f3'], archived: { f2: true, f3: false } }),
    benefit('downloadables', 'Downloads, bare', {}),
    benefit('github_repository', 'Repository', { repository_owner: 'acme', repository_name: 'tool', permission: 'pull' }),
    benefit('license_keys', 'License keys', { prefix: 'emp', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enable_customer_admin: true }, limit_usage: 50 }),
    benefit('license_keys', 'License keys, bare', {}),
    benefit('meter_credit', 'Credits', { units: 100, meter_id: randomUUID(), rollover: true }, { selectable: false, deletable: false, modifiedAt: new Date('2026-05-06T07:08:09.010Z') }),
    benefit('custom', 'Deleted', { note: null }, { deletedAt: new Date() }),
  ];
  const field = (type: CustomField['type'], slug: string, properties: Record<string, unknown>) =>
    em.create(CustomField, { id: randomUUID(), organization: org, type, slug, name: slug.toUpperCase(), properties: properties as CustomField['properties'], metadata: { source: 'test', n: 1, on: true }, deletedAt: null });
  const fields = [
    field('text', 'company', { form_label: 'Company', form_help_text: null, textarea: true, min_length: 2 }),
    field('select', 'size', { form_label: 'Size', options: [{ value: 's', label: 'Small' }, { value: 'l', label: 'Large' }] }),
    field('checkbox', 'terms', {}),
  ];
  await em.flush();
  return { files, benefits, fields };
}

let seeded: Awaited<ReturnType<typeof insertRows>>;
const productIds: string[] = [];
let otherProductId: string;
/** The create responses (serializeProduct of the new product). */
const created = new Map<string, { prices: { id: string }[] }>();
let otherBenefitId: string;

beforeAll(async () => {
  srv = await startTestServer();
  s = await seller(srv.url, SCOPES);
  other = await seller(srv.url, SCOPES);
  seeded = await insertRows(s.organization.id);
  const meter = await call(s.token, 'POST', '/v1/meters/', { name: 'API calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
  expect(meter.status).toBe(201);
  const meter2 = await call(s.token, 'POST', '/v1/meters/', { name: 'Seats', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
  expect(meter2.status).toBe(201);
  const [f0, f1, f2, f3, f4] = seeded.files.map((f) => f.id);
  const bodies: Record<string, unknown>[] = [
    { name: 'Fixed one-time', description: 'Everything', prices: [{ amount_type: 'fixed', price_amount: 1999, price_currency: 'EUR' }], medias: [f1, f0, f2, f3, f4], attached_custom_fields: seeded.fields.map((f, i) => ({ custom_field_id: f.id, required: i === 0 })), metadata: { plan: 'pro', seats: 5, beta: false } },
    { name: 'Custom monthly', recurring_interval: 'month', trial_interval: 'week', trial_interval_count: 2, prices: [{ amount_type: 'custom', minimum_amount: 500, maximum_amount: null, preset_amount: 1000 }] },
    { name: 'Custom bare', prices: [{ amount_type: 'custom' }] },
    { name: 'Free yearly', recurring_interval: 'year', prices: [{ amount_type: 'free' }] },
    { name: 'Metered monthly', recurring_interval: 'month', prices: [{ amount_type: 'metered_unit', meter_id: meter.body.id, unit_amount: '0.0150', cap_amount: 10000 }, { amount_type: 'fixed', price_amount: 900 }] },
    { name: 'Metered only', recurring_interval: 'month', prices: [{ amount_type: 'metered_unit', meter_id: meter.body.id, unit_amount: 12, cap_amount: null }] },
    { name: 'Archived later', prices: [{ amount_type: 'fixed', price_amount: 5000 }] },
    { name: 'Zebra repriced', prices: [{ amount_type: 'fixed', price_amount: 100 }] },
    { name: 'Two meters', recurring_interval: 'month', prices: [{ amount_type: 'metered_unit', meter_id: meter.body.id, unit_amount: '0.5' }, { amount_type: 'metered_unit', meter_id: meter2.body.id, unit_amount: '0.25' }] },
  ];
  for (const body of bodies) {
    const r = await call(s.token, 'POST', '/v1/products/', body);
    expect(r.status).toBe(201);
    productIds.push(r.body.id);
    created.set(r.body.id, r.body);
  }
  const live = seeded.benefits.filter((b) => !b.deletedAt && b.selectable).map((b) => b.id);
  expect((await call(s.token, 'POST', `/v1/products/${productIds[0]}/benefits`, { benefits: live })).status).toBe(200);
  expect((await call(s.token, 'POST', `/v1/products/${productIds[1]}/benefits`, { benefits: [live[3], live[0]] })).status).toBe(200);
  expect((await call(s.token, 'PATCH', `/v1/products/${productIds[6]}`, { is_archived: true, description: null })).status).toBe(200);
  const zebra = await call(s.token, 'GET', `/v1/products/${productIds[7]}`);
  expect((await call(s.token, 'PATCH', `/v1/products/${productIds[7]}`, { prices: [{ amount_type: 'free' }], metadata: { k: 'v' } })).status).toBe(200);
  expect(zebra.body.prices).toHaveLength(1);
  // A benefit deleted after it was attached stays on the product as the serializer shows it.
  const em = srv.deps.orm.em.fork();
  const deleted = seeded.benefits.find((b) => b.description === 'Deleted')!;
  await em.getConnection().execute(`insert into product_benefits (id, created_at, product_id, benefit_id, "order") values (?, now(), ?, ?, 99)`, [randomUUID(), productIds[3], deleted.id]);
  const o = await call(other.token, 'POST', '/v1/products/', { name: 'Not yours', prices: [{ amount_type: 'free' }] });
  otherProductId = o.body.id;
  const ob = await call(other.token, 'POST', '/v1/benefits/', { type: 'custom', description: 'Not yours', properties: { note: null } });
  expect(ob.status).toBe(201);
  otherBenefitId = ob.body.id;
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

/** What the ORM path made of these products: `serializeProduct` of each, in the given order. */
async function serializedProducts(ids: string[]) {
  const em = srv.deps.orm.em.fork();
  const products = await em.find(Product, { id: { $in: ids } }, { populate: PRODUCT_POPULATE });
  const byId = new Map(products.map((p) => [p.id, p]));
  const out = JSON.parse(JSON.stringify(ids.map((id) => serializeProduct(byId.get(id)!)))) as { id: string; prices: { id: string; amount_type: string; created_at: string }[] }[];
  // Prices stored in the same millisecond: the ORM returns them in whatever order its plan gives; the
  // read shows them in the order the create request gave them (checked against the create response above).
  for (const p of out) {
    const order = (created.get(p.id)?.prices ?? []).map((x) => x.id);
    const rank = (id: string) => (order.includes(id) ? order.indexOf(id) : order.length);
    p.prices.sort((a, b) => Number(b.amount_type !== 'metered_unit') - Number(a.amount_type !== 'metered_unit') || a.created_at.localeCompare(b.created_at) || rank(a.id) - rank(b.id));
  }
  return out as any[];
}

describe('products read by PostgreSQL', () => {
  it('answers each product by id exactly as serializeProduct, and another organization’s product is 404', async () => {
    const expected = await serializedProducts(productIds);
    expect(expected.map((p) => p.id)).toHaveLength(9);
    expect(expected[0].medias).toHaveLength(5);
    expect(expected[0].benefits).toHaveLength(8);
    expect(expected[0].attached_custom_fields).toHaveLength(3);
    for (const [i, id] of productIds.entries()) {
      const r = await call(s.token, 'GET', `/v1/products/${id}`);
      expect(r.status).toBe(200);
      expect(r.type).toBe('application/json; charset=utf-8');
      expect(r.body).toEqual(expected[i]);
    }
    // Prices stored by one request come back in the order the request gave them.
    const twoMeters = await call(s.token, 'GET', `/v1/products/${productIds[8]}`);
    expect(twoMeters.body.prices.map((p: { unit_amount: string }) => p.unit_amount)).toEqual(['0.5', '0.25']);
    expect(twoMeters.body.prices.map((p: { id: string }) => p.id)).toEqual(created.get(productIds[8]!)!.prices.map((p) => p.id));
    const foreign = await call(s.token, 'GET', `/v1/products/${otherProductId}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('ResourceNotFound');
    expect((await call(s.token, 'GET', `/v1/products/${randomUUID()}`)).status).toBe(404);
  });

  const orgFilter = () => ({ organizationIds: [s.organization.id] });
  const cases: [string, () => Record<string, unknown>, string[]][] = [
    ['', () => ({}), ['-created_at']],
    ['?limit=3&page=2', () => ({}), ['-created_at']],
    ['?limit=3&page=9', () => ({}), ['-created_at']],
    ['?sorting=name', () => ({}), ['name']],
    ['?sorting=-price_amount&sorting=name', () => ({}), ['-price_amount', 'name']],
    ['?sorting=price_amount_type&sorting=-created_at', () => ({}), ['price_amount_type', '-created_at']],
    ['?is_archived=false', () => ({ isArchived: false }), ['-created_at']],
    ['?is_archived=true', () => ({ isArchived: true }), ['-created_at']],
    ['?is_recurring=true&sorting=name', () => ({ isRecurring: true }), ['name']],
    ['?is_recurring=false', () => ({ isRecurring: false }), ['-created_at']],
    ['?query=METERED', () => ({ query: 'METERED' }), ['-created_at']],
    ['?query=100%25', () => ({ query: '100%' }), ['-created_at']],
  ];
  it.each(cases)('lists %s exactly as the ORM path', async (qs, filters, sorting) => {
    const limit = Number(/limit=(\d+)/.exec(qs)?.[1] ?? 10);
    const page = Number(/page=(\d+)/.exec(qs)?.[1] ?? 1);
    const em = srv.deps.orm.em.fork();
    const { ids, total } = await listProductIds(em, { ...orgFilter(), ...filters() }, sorting, { limit, offset: (page - 1) * limit });
    const r = await call(s.token, 'GET', `/v1/products/${qs}`);
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ items: await serializedProducts(ids), pagination: { total_count: total, max_page: Math.ceil(total / limit) } });
  });

  it('lists by id, by benefit and by organization exactly as the ORM path, never another organization’s products', async () => {
    const benefitId = seeded.benefits[3]!.id;
    const byIds = await call(s.token, 'GET', `/v1/products/?id=${productIds[2]}&id=${productIds[4]}&id=${otherProductId}`);
    expect(byIds.status).toBe(200);
    const em = srv.deps.orm.em.fork();
    const expectedIds = (await listProductIds(em, { organizationIds: [s.organization.id], ids: [productIds[2]!, productIds[4]!, otherProductId] }, ['-created_at'], { limit: 10, offset: 0 })).ids;
    expect(expectedIds).toEqual([productIds[4], productIds[2]]);
    expect(byIds.body.items).toEqual(await serializedProducts(expectedIds));
    const byBenefit = await call(s.token, 'GET', `/v1/products/?benefit_id=${benefitId}`);
    expect(byBenefit.body.items.map((p: { id: string }) => p.id)).toEqual([productIds[1], productIds[0]]);
    expect(byBenefit.body.items).toEqual(await serializedProducts([productIds[1]!, productIds[0]!]));
    const foreignOrg = await call(s.token, 'GET', `/v1/products/?organization_id=${other.organization.id}`);
    expect(foreignOrg.body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });
});

describe('benefits read by PostgreSQL', () => {
  const serializedBenefits = async (ids: string[]) => {
    const em = srv.deps.orm.em.fork();
    const rows = await em.find(Benefit, { id: { $in: ids } });
    const byId = new Map(rows.map((b) => [b.id, b]));
    return JSON.parse(JSON.stringify(ids.map((id) => serializeBenefit(byId.get(id)!))));
  };

  it('answers each live benefit by id exactly as serializeBenefit; deleted and foreign ones are 404', async () => {
    const live = seeded.benefits.filter((b) => !b.deletedAt);
    expect(live).toHaveLength(9);
    const expected = await serializedBenefits(live.map((b) => b.id));
    for (const [i, b] of live.entries()) {
      const r = await call(s.token, 'GET', `/v1/benefits/${b.id}`);
      expect(r.status).toBe(200);
      expect(r.body).toEqual(expected[i]);
    }
    expect(expected[2].properties.guild_token).toBe('');
    expect(expected[3].properties.active_files).toEqual(['f1', 'f3']);
    const deleted = seeded.benefits.find((b) => b.deletedAt)!;
    expect((await call(s.token, 'GET', `/v1/benefits/${deleted.id}`)).status).toBe(404);
    expect((await call(s.token, 'GET', `/v1/benefits/${otherBenefitId}`)).status).toBe(404);
  });

  const cases: [string, (b: Benefit) => boolean, (a: Benefit, b: Benefit) => number][] = [
    ['', () => true, (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || a.id.localeCompare(b.id)],
    ['?sorting=description', () => true, (a, b) => (a.description < b.description ? -1 : a.description > b.description ? 1 : a.id.localeCompare(b.id))],
    ['?type=custom&type=downloadables&sorting=-description', (b) => ['custom', 'downloadables'].includes(b.type), (a, b) => (a.description > b.description ? -1 : a.description < b.description ? 1 : 0)],
    ['?query=bare&sorting=description', (b) => /bare/i.test(b.description), (a, b) => (a.description < b.description ? -1 : 1)],
  ];
  it.each(cases)('lists %s as the ORM path would, paged', async (qs, keep, order) => {
    const em = srv.deps.orm.em.fork();
    const all = await em.find(Benefit, { organization: s.organization.id, deletedAt: null });
    const ids = all.filter(keep).sort(order).map((b) => b.id);
    expect(ids.length).toBeGreaterThan(1);
    const sep = qs ? '&' : '?';
    const first = await call(s.token, 'GET', `/v1/benefits/${qs}${sep}limit=2`);
    const second = await call(s.token, 'GET', `/v1/benefits/${qs}${sep}limit=2&page=2`);
    expect(first.status).toBe(200);
    const pagination = { total_count: ids.length, max_page: Math.ceil(ids.length / 2) };
    expect(first.body).toEqual({ items: await serializedBenefits(ids.slice(0, 2)), pagination });
    expect(second.body).toEqual({ items: await serializedBenefits(ids.slice(2, 4)), pagination });
  });
});
