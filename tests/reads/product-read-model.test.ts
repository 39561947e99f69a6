/**
 * Product, order and subscription reads embed the product's stored read model (`product_read_models`,
 * refreshed by triggers at commit). After every kind of write that changes what a product shows
 * (create, update, archive, prices replaced, benefits attached and detached, a benefit updated or
 * deleted, a media file renamed, a custom field updated, a meter renamed) the product read by id and in
 * the list must be deep-equal to `serializeProduct` of the same rows; two transactions changing one
 * product at the same time both show; a purchase leaves the product and its read model untouched; and
 * the stored copy's SQL function builds what `buildProductJsonSql` builds (a change of the product JSON
 * needs a migration).
 */
import { randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { buy, GRANT_SCOPES } from '../grants/helpers.ts';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { File } from '../../api/src/modules/files/entities.ts';
import { Product } from '../../api/src/modules/products/entities.ts';
import { PRODUCT_POPULATE, serializeProduct } from '../../api/src/modules/products/schemas.ts';
import { buildProductJsonSql, PRODUCT_MODEL_URL_PREFIX } from '../../api/src/modules/products/read-sql.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;
const SCOPES = [...GRANT_SCOPES, 'custom_fields:read', 'custom_fields:write'];

async function call(method: string, path: string, body?: unknown) {
  const res = await fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: res.status === 204 ? null : await json(res) };
}
async function ok(method: string, path: string, body?: unknown, status = method === 'POST' ? 201 : 200) {
  const r = await call(method, path, body);
  expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(status);
  return r.body;
}

/** `serializeProduct` of the product as the ORM loads it now (prices in the read's order: static first, then by creation). */
async function serialized(id: string) {
  const em = srv.deps.orm.em.fork();
  const p = await em.findOneOrFail(Product, id, { populate: PRODUCT_POPULATE });
  const out = JSON.parse(JSON.stringify(serializeProduct(p))) as { prices: { amount_type: string; created_at: string }[] };
  out.prices.sort((a, b) => Number(b.amount_type !== 'metered_unit') - Number(a.amount_type !== 'metered_unit') || a.created_at.localeCompare(b.created_at));
  return out;
}

/** The product read by id, in the products list, and embedded in an order of it: each equal to the serializer. */
async function expectReadsMatch(id: string) {
  const expected = await serialized(id);
  expect(await ok('GET', `/v1/products/${id}`)).toEqual(expected);
  const list = await ok('GET', `/v1/products/?id=${id}`);
  expect(list.items).toEqual([expected]);
  return expected as Record<string, any>;
}

let meterId: string;
let fileIds: string[];
let fieldId: string;
let benefitIds: string[];
let productId: string;

beforeAll(async () => {
  srv = await startTestServer();
  s = await seller(srv.url, SCOPES);
  const em = srv.deps.orm.em.fork();
  const org = em.getReference(Organization, s.organization.id);
  const files = ['a.png', 'b c.png'].map((name, i) =>
    em.create(File, {
      id: randomUUID(), organization: org, name, path: `${s.organization.id}/${i}/${name}`, mimeType: 'image/png', size: 2048 * (i + 1),
      service: 'product_media', version: null, uploadId: null, storageVersion: null, checksumEtag: null, checksumSha256Base64: null,
      checksumSha256Hex: null, lastModifiedAt: null, isUploaded: true, isEnabled: true, deletedAt: null,
    }),
  );
  await em.flush();
  fileIds = files.map((f) => f.id);
  meterId = (await ok('POST', '/v1/meters/', { name: 'API calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } })).id;
  fieldId = (await ok('POST', '/v1/custom-fields/', { type: 'text', slug: 'company', name: 'Company', properties: { form_label: 'Company' } })).id;
  benefitIds = [
    (await ok('POST', '/v1/benefits/', { type: 'custom', description: 'Support', properties: { note: 'Hi' } })).id,
    (await ok('POST', '/v1/benefits/', { type: 'custom', description: 'Sticker', properties: { note: null } })).id,
  ];
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

describe('the stored product read model', () => {
  it('shows every kind of write exactly as serializeProduct', async () => {
    const created = await ok('POST', '/v1/products/', {
      name: 'Pro', recurring_interval: 'month', metadata: { tier: 'pro' }, medias: fileIds,
      attached_custom_fields: [{ custom_field_id: fieldId, required: true }],
      prices: [{ amount_type: 'metered_unit', meter_id: meterId, unit_amount: '0.5', cap_amount: 1000 }],
    });
    productId = created.id;
    let read = await expectReadsMatch(productId);
    expect(read.medias.map((m: { public_url: string }) => m.public_url)).toEqual(created.medias.map((m: { public_url: string }) => m.public_url));
    expect(read.medias[1].public_url).toMatch(/\/b%20c\.png$/);

    // Prices replaced: the old price is archived and leaves the product; a free and a fixed price come.
    await ok('PATCH', `/v1/products/${productId}`, { name: 'Pro 2', description: 'New', prices: [{ amount_type: 'free' }] });
    read = await expectReadsMatch(productId);
    expect(read.prices.map((p: { amount_type: string }) => p.amount_type)).toEqual(['free']);
    await ok('PATCH', `/v1/products/${productId}`, { prices: [{ id: read.prices[0].id }, { amount_type: 'metered_unit', meter_id: meterId, unit_amount: '2' }] });
    read = await expectReadsMatch(productId);
    expect(read.prices.map((p: { amount_type: string }) => p.amount_type)).toEqual(['free', 'metered_unit']);

    await ok('POST', `/v1/products/${productId}/benefits`, { benefits: benefitIds }, 200);
    read = await expectReadsMatch(productId);
    expect(read.benefits.map((b: { id: string }) => b.id)).toEqual(benefitIds);

    await ok('PATCH', `/v1/benefits/${benefitIds[0]}`, { type: 'custom', description: 'Priority support' });
    read = await expectReadsMatch(productId);
    expect(read.benefits[0].description).toBe('Priority support');

    await ok('PATCH', `/v1/meters/${meterId}`, { name: 'Requests' });
    read = await expectReadsMatch(productId);
    expect(read.prices[1].meter.name).toBe('Requests');

    await ok('PATCH', `/v1/files/${fileIds[0]}`, { name: 'renamed.png' });
    read = await expectReadsMatch(productId);
    expect(read.medias[0].name).toBe('renamed.png');

    await ok('PATCH', `/v1/custom-fields/${fieldId}`, { type: 'text', name: 'Company name' });
    read = await expectReadsMatch(productId);
    expect(read.attached_custom_fields[0].custom_field.name).toBe('Company name');

    await ok('POST', `/v1/products/${productId}/benefits`, { benefits: [benefitIds[1]] }, 200);
    read = await expectReadsMatch(productId);
    expect(read.benefits.map((b: { id: string }) => b.id)).toEqual([benefitIds[1]]);

    await ok('DELETE', `/v1/benefits/${benefitIds[1]}`, undefined, 204);
    read = await expectReadsMatch(productId);

    await ok('PATCH', `/v1/products/${productId}`, { medias: [fileIds[1]], attached_custom_fields: [], is_archived: true });
    read = await expectReadsMatch(productId);
    expect([read.is_archived, read.medias.length, read.attached_custom_fields.length]).toEqual([true, 1, 0]);
  });

  it('shows both of two transactions that change one product at the same time', async () => {
    const p = await ok('POST', '/v1/products/', { name: 'Shared', prices: [{ amount_type: 'fixed', price_amount: 100 }] });
    const a = await ok('POST', '/v1/benefits/', { type: 'custom', description: 'Alpha', properties: { note: null } });
    const b = await ok('POST', '/v1/benefits/', { type: 'custom', description: 'Beta', properties: { note: null } });
    await ok('POST', `/v1/products/${p.id}/benefits`, { benefits: [a.id, b.id] }, 200);
    const clients = [new pg.Client({ connectionString: srv.deps.cfg.DATABASE_URL }), new pg.Client({ connectionString: srv.deps.cfg.DATABASE_URL })];
    await Promise.all(clients.map((c) => c.connect()));
    try {
      await Promise.all(clients.map((c) => c.query('begin')));
      await clients[0]!.query(`update benefits set description = 'Alpha changed' where id = $1`, [a.id]);
      await clients[1]!.query(`update benefits set description = 'Beta changed' where id = $1`, [b.id]);
      await Promise.all(clients.map((c) => c.query('commit')));
    } finally {
      await Promise.all(clients.map((c) => c.end()));
    }
    const read = await expectReadsMatch(p.id);
    expect(read.benefits.map((x: { description: string }) => x.description)).toEqual(['Alpha changed', 'Beta changed']);
  });

  it('is not written by a purchase, and the purchase’s order embeds it', async () => {
    const p = await ok('POST', '/v1/products/', { name: 'E-book', prices: [{ amount_type: 'fixed', price_amount: 1500 }] });
    await ok('POST', `/v1/products/${p.id}/benefits`, { benefits: [benefitIds[0]] }, 200);
    const em = srv.deps.orm.em.fork();
    const versions = () =>
      em.getConnection().execute<{ p: string; r: string; x: string }[]>(
        `select p.xmin::text as p, r.xmin::text as r, r.refreshed_xid::text as x from products p join product_read_models r on r.product_id = p.id where p.id = ?`,
        [p.id],
      );
    const before = await versions();
    expect(before).toHaveLength(1);
    const purchase = await buy(srv, { ...s, polar: new Polar({ accessToken: s.token, serverURL: srv.url }) }, p.id);
    expect(await versions()).toEqual(before);
    const order = await ok('GET', `/v1/orders/${purchase.orderId}`);
    expect(order.product).toEqual(await serialized(p.id));
  });

  it('is built by a function that builds what buildProductJsonSql builds', async () => {
    await ok('POST', '/v1/products/', {
      name: 'Everything', recurring_interval: 'month', medias: fileIds, attached_custom_fields: [{ custom_field_id: fieldId, required: false }],
      prices: [{ amount_type: 'metered_unit', meter_id: meterId, unit_amount: '0.25' }, { amount_type: 'fixed', price_amount: 100 }],
    });
    const rows = await srv.deps.orm.em.fork().getConnection().execute<{ id: string; stored: string; live: string; model: string }[]>(
      `select x.id, r.json::text as stored, product_read_model_json(x.id)::text as live,
              ${buildProductJsonSql('x.id', PRODUCT_MODEL_URL_PREFIX)}::text as model
         from products x join product_read_models r on r.product_id = x.id where x.organization_id = ? order by x.id`,
      [s.organization.id],
    );
    expect(rows.length).toBeGreaterThanOrEqual(1);
    expect(rows.map((r) => JSON.parse(r.stored).name)).toContain('Everything');
    expect(rows.map((r) => [r.stored, r.live])).toEqual(rows.map((r) => [r.model, r.model]));
  });
});
