/**
 * /v1/products, complete: every price type, media, custom fields and benefits; list filters and
 * sorting; PATCH (prices kept by id, created, archived); the contract through `@polar-sh/sdk`
 * 0.29.3; raw error bodies; outbox events; tenant isolation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { SDKValidationError } from '@polar-sh/sdk/models/errors/sdkvalidationerror.js';
import { ProductPrice } from '../../api/src/modules/products/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, insertFile, insertMeter, locs, outbox, sellerB, type SellerB } from './helpers-b.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

const post = (s: SellerB, body: unknown) => s.call('POST', '/v1/products/', body);

describe('products through the SDK', () => {
  it('creates fixed, custom and free products and reads them back', async () => {
    const s = await sellerB(srv);
    const fixed = await s.polar.products.create({
      name: 'Pro plan',
      description: 'Everything',
      recurringInterval: 'month',
      prices: [{ amountType: 'fixed', priceAmount: 1900, priceCurrency: 'eur' }],
      metadata: { tier: 'pro', seats: 5, beta: false },
    });
    expect(fixed).toMatchObject({
      name: 'Pro plan',
      description: 'Everything',
      recurringInterval: 'month',
      isRecurring: true,
      isArchived: false,
      organizationId: s.organization.id,
      metadata: { tier: 'pro', seats: 5, beta: false },
      benefits: [],
      medias: [],
      attachedCustomFields: [],
    });
    expect(fixed.prices).toEqual([
      expect.objectContaining({
        amountType: 'fixed', priceAmount: 1900, priceCurrency: 'eur', type: 'recurring', recurringInterval: 'month',
        isArchived: false, productId: fixed.id,
      }),
    ]);
    expect(fixed.createdAt).toBeInstanceOf(Date);

    const custom = await s.polar.products.create({
      name: 'Tip jar',
      recurringInterval: null,
      prices: [{ amountType: 'custom', minimumAmount: 100, maximumAmount: 10_000, presetAmount: 500 }],
    });
    expect(custom.prices[0]).toMatchObject({
      amountType: 'custom', minimumAmount: 100, maximumAmount: 10_000, presetAmount: 500, priceCurrency: 'usd', type: 'one_time',
    });
    const free = await s.polar.products.create({ name: 'Sampler', recurringInterval: null, prices: [{ amountType: 'free' }] });
    expect(free.prices[0]).toMatchObject({ amountType: 'free', type: 'one_time', recurringInterval: null });
    expect(free.description).toBeNull();

    expect(await s.polar.products.get({ id: custom.id })).toEqual(custom);
    const list = await s.polar.products.list({ organizationId: s.organization.id, sorting: ['name'] });
    expect(list.result.items.map((p) => p.name)).toEqual(['Pro plan', 'Sampler', 'Tip jar']);

    const created = await outbox(srv, s.organization.id, 'product.created');
    expect(created.map((e) => e.data.id)).toEqual([fixed.id, custom.id, free.id]);
    expect(created[0]!.data.prices[0]).toMatchObject({ amount_type: 'fixed', price_amount: 1900 });
  });

  it('creates a product with media and custom fields, and updates them', async () => {
    const s = await sellerB(srv);
    const cover = await insertFile(srv, s.organization.id, 'product_media', { name: 'cover.png' });
    const shot = await insertFile(srv, s.organization.id, 'product_media', { name: 'shot.png' });
    const company = await s.polar.customFields.create({ type: 'text', slug: 'company', name: 'Company', properties: {} });
    const seats = await s.polar.customFields.create({ type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1 } });

    const product = await s.polar.products.create({
      name: 'Course',
      recurringInterval: null,
      prices: [{ amountType: 'fixed', priceAmount: 4900 }],
      medias: [cover.id, shot.id],
      attachedCustomFields: [
        { customFieldId: seats.id, required: true },
        { customFieldId: company.id, required: false },
      ],
    });
    expect(product.medias.map((m) => [m.id, m.name, m.service, m.isUploaded, m.sizeReadable])).toEqual([
      [cover.id, 'cover.png', 'product_media', true, '1.5 KB'],
      [shot.id, 'shot.png', 'product_media', true, '1.5 KB'],
    ]);
    expect(product.medias[0]!.publicUrl).toMatch(new RegExp(`/${cover.path}$`));
    expect(product.attachedCustomFields.map((a) => [a.customFieldId, a.order, a.required, a.customField.slug])).toEqual([
      [seats.id, 0, true, 'seats'],
      [company.id, 1, false, 'company'],
    ]);
    expect(product.attachedCustomFields[0]!.customField).toMatchObject({ type: 'number', properties: { ge: 1 } });

    const updated = await s.polar.products.update({
      id: product.id,
      productUpdate: {
        medias: [shot.id],
        attachedCustomFields: [
          { customFieldId: company.id, required: true },
          { customFieldId: seats.id, required: false },
        ],
      },
    });
    expect(updated.medias.map((m) => m.id)).toEqual([shot.id]);
    expect(updated.attachedCustomFields.map((a) => [a.customFieldId, a.order, a.required])).toEqual([
      [company.id, 0, true],
      [seats.id, 1, false],
    ]);
    // Deleting a custom field detaches it.
    await s.polar.customFields.delete({ id: company.id });
    const after = await s.polar.products.get({ id: product.id });
    expect(after.attachedCustomFields.map((a) => a.customFieldId)).toEqual([seats.id]);
  });

  it('updates details and prices: kept by id, new ones created, dropped ones archived', async () => {
    const s = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id);
    const product = await s.call('POST', '/v1/products/', {
      name: 'Usage plan',
      recurring_interval: 'month',
      prices: [
        { amount_type: 'fixed', price_amount: 1000 },
        { amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '0.5' },
      ],
    });
    expect(product.status).toBe(201);
    const [fixedPrice, meteredPrice] = product.body.prices;
    const updated = await s.call('PATCH', `/v1/products/${product.body.id}`, {
      name: 'Usage plan v2',
      description: 'Now with more',
      metadata: { v: 2 },
      prices: [{ id: meteredPrice.id }, { amount_type: 'fixed', price_amount: 1500 }],
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ name: 'Usage plan v2', description: 'Now with more', metadata: { v: 2 } });
    expect(updated.body.prices.map((p: any) => [p.amount_type, p.price_amount ?? p.unit_amount])).toEqual([
      ['fixed', 1500],
      ['metered_unit', '0.5'],
    ]);
    expect(updated.body.prices[1].id).toBe(meteredPrice.id);
    // The dropped price is archived, not deleted.
    const old = await srv.deps.orm.em.fork().findOneOrFail(ProductPrice, { id: fixedPrice.id });
    expect(old.isArchived).toBe(true);

    // Through the SDK on a product it can parse: keep, add, archive, rename, clear the description.
    const simple = await s.polar.products.create({
      name: 'Simple',
      description: 'Old text',
      recurringInterval: 'year',
      prices: [{ amountType: 'fixed', priceAmount: 9900 }],
    });
    const swapped = await s.polar.products.update({
      id: simple.id,
      productUpdate: { prices: [{ amountType: 'custom', minimumAmount: 5000 }], isArchived: true, description: null },
    });
    expect(swapped.prices).toHaveLength(1);
    expect(swapped.prices[0]).toMatchObject({ amountType: 'custom', minimumAmount: 5000, type: 'recurring', recurringInterval: 'year' });
    expect(swapped).toMatchObject({ isArchived: true, description: null, name: 'Simple' });
    const kept = await s.polar.products.update({ id: simple.id, productUpdate: { prices: [{ id: swapped.prices[0]!.id }], isArchived: false } });
    expect(kept.prices.map((p) => p.id)).toEqual([swapped.prices[0]!.id]);
    expect(kept.isArchived).toBe(false);
    expect(kept.modifiedAt).toBeInstanceOf(Date);

    const events = await outbox(srv, s.organization.id, 'product.updated');
    expect(events.map((e) => e.data.id)).toEqual([product.body.id, simple.id, simple.id]);
    expect(events[0]!.data.name).toBe('Usage plan v2');
  });

  it("replaces a product's benefits in order", async () => {
    const s = await sellerB(srv);
    const a = await s.polar.benefits.create({ type: 'custom', description: 'Alpha', properties: {} });
    const b = await s.polar.benefits.create({ type: 'license_keys', description: 'Beta keys', properties: { prefix: 'b' } });
    const c = await s.polar.benefits.create({ type: 'custom', description: 'Gamma', properties: {} });
    const product = await s.polar.products.create({ name: 'Bundle', recurringInterval: null, prices: [{ amountType: 'free' }] });

    const first = await s.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [b.id, a.id] } });
    expect(first.benefits.map((x) => x.id)).toEqual([b.id, a.id]);
    expect(first.benefits[0]).toMatchObject({ type: 'license_keys', properties: { prefix: 'b' } });
    const second = await s.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [c.id, b.id] } });
    expect(second.benefits.map((x) => x.id)).toEqual([c.id, b.id]);
    expect((await s.polar.products.get({ id: product.id })).benefits.map((x) => x.description)).toEqual(['Gamma', 'Beta keys']);
    const byBenefit = await s.polar.products.list({ benefitId: a.id });
    expect(byBenefit.result.items).toEqual([]);
    expect((await s.polar.products.list({ benefitId: [b.id] })).result.items.map((p) => p.id)).toEqual([product.id]);
    const cleared = await s.polar.products.updateBenefits({ id: product.id, productBenefitsUpdate: { benefits: [] } });
    expect(cleared.benefits).toEqual([]);
    const events = await outbox(srv, s.organization.id, 'product.updated');
    expect(events.map((e) => e.data.benefits.length)).toEqual([2, 2, 0]);
  });

  it('reports 422s as typed errors', async () => {
    const s = await sellerB(srv);
    const product = await s.polar.products.create({ name: 'Typed', recurringInterval: 'month', prices: [{ amountType: 'free' }] });
    const err = await s.polar.products
      .update({ id: product.id, productUpdate: { recurringInterval: 'year' } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HTTPValidationError);
    expect((err as HTTPValidationError).detail).toEqual([
      expect.objectContaining({ loc: ['body', 'recurring_interval'], msg: 'Recurring interval cannot be changed.' }),
    ]);
    await expect(s.polar.products.get({ id: '5d6e7f80-9a1b-4c2d-8e3f-405162738495' })).rejects.toBeInstanceOf(ResourceNotFound);
  });
});

describe('metered prices', () => {
  it('stores unit_amount as an exact decimal string, with meter and cap', async () => {
    const s = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id, 'Tokens');
    const other = await insertMeter(srv, s.organization.id, 'Seats');
    const res = await post(s, {
      name: 'API',
      recurring_interval: 'month',
      prices: [
        { amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '0.000000000001', cap_amount: 50_000 },
        { amount_type: 'metered_unit', meter_id: other.id, unit_amount: 12.5, price_currency: 'EUR' },
      ],
    });
    expect(res.status).toBe(201);
    expect(res.body.prices).toEqual([
      expect.objectContaining({
        amount_type: 'metered_unit', unit_amount: '0.000000000001', cap_amount: 50_000, price_currency: 'usd',
        meter_id: meter.id, meter: { id: meter.id, name: 'Tokens' }, type: 'recurring', recurring_interval: 'month', is_archived: false,
      }),
      expect.objectContaining({ unit_amount: '12.5', cap_amount: null, price_currency: 'eur', meter: { id: other.id, name: 'Seats' } }),
    ]);
    const stored = await srv.deps.orm.em.fork().findOneOrFail(ProductPrice, { id: res.body.prices[0].id });
    expect(stored.unitAmount).toBe('0.000000000001');

    // SDK 0.29.3 has no metered price in its closed price union: such a product does not parse there.
    await expect(s.polar.products.get({ id: res.body.id })).rejects.toBeInstanceOf(SDKValidationError);
    const raw = await s.call('GET', `/v1/products/${res.body.id}`);
    expect(raw.body.prices[0].unit_amount).toBe('0.000000000001');
  });

  it('refuses bad unit amounts, one-time products, foreign or reused meters', async () => {
    const s = await sellerB(srv);
    const other = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id);
    const foreign = await insertMeter(srv, other.organization.id);
    const metered = (extra: Record<string, unknown>) => ({ amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '1', ...extra });
    const create = (prices: unknown[], recurring: string | null = 'month') => post(s, { name: 'Metered', recurring_interval: recurring, prices });

    for (const unit_amount of ['0', '-1', '1e-3', 'abc', '123456', '0.0000000000001', 1e-13, 0.1 + 0.2]) {
      const r = await create([metered({ unit_amount })]);
      expect(r.status, String(unit_amount)).toBe(422);
      expect(locs(r)).toEqual([['body', 'prices', 0, 'unit_amount']]);
    }
    const oneTime = await create([metered({})], null);
    expect(oneTime.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'prices', 0], msg: 'Metered pricing is not supported on one-time products.' }),
    ]);
    const foreignMeter = await create([metered({ meter_id: foreign.id })]);
    expect(foreignMeter.body.detail).toEqual([
      { type: 'value_error', loc: ['body', 'prices', 0, 'meter_id'], msg: 'Meter does not exist.', input: foreign.id },
    ]);
    const reused = await create([metered({}), metered({ unit_amount: '2' })]);
    expect(locs(reused)).toEqual([['body', 'prices', 1, 'meter_id']]);
    const twoStatic = await create([{ amount_type: 'free' }, { amount_type: 'fixed', price_amount: 500 }]);
    expect(locs(twoStatic)).toEqual([['body', 'prices']]);
    expect((await s.call('GET', '/v1/products/')).body.pagination.total_count).toBe(0);
  });
});

describe('listing', () => {
  it('filters by id, query, archived and recurring, and sorts by price', async () => {
    const s = await sellerB(srv);
    const meter = await insertMeter(srv, s.organization.id);
    const mk = async (name: string, recurring: string | null, prices: unknown[]) => {
      const r = await post(s, { name, recurring_interval: recurring, prices });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.id as string;
    };
    const fixed900 = await mk('Fixed 900', null, [{ amount_type: 'fixed', price_amount: 900 }]);
    const fixed300 = await mk('Fixed 300', 'month', [{ amount_type: 'fixed', price_amount: 300 }]);
    const custom = await mk('Custom min 200', null, [{ amount_type: 'custom', minimum_amount: 200 }]);
    const free = await mk('Free thing', 'year', [{ amount_type: 'free' }]);
    const meteredOnly = await mk('Metered only', 'month', [{ amount_type: 'metered_unit', meter_id: meter.id, unit_amount: '1' }]);
    await s.call('PATCH', `/v1/products/${custom}`, { is_archived: true });

    const ids = async (q: string) => (await s.call('GET', `/v1/products/?${q}`)).body.items.map((p: { id: string }) => p.id);
    expect(await ids('sorting=price_amount')).toEqual([free, custom, fixed300, fixed900, meteredOnly]);
    expect(await ids('sorting=-price_amount_type&sorting=name')).toEqual([meteredOnly, fixed300, fixed900, custom, free]);
    expect(await ids('sorting=price_amount_type&sorting=-price_amount')).toEqual([free, custom, fixed900, fixed300, meteredOnly]);
    expect(await ids(`id=${free}&id=${custom}&sorting=name`)).toEqual([custom, free]);
    expect(await ids('query=FIXED&sorting=name')).toEqual([fixed300, fixed900]);
    expect(await ids('query=%25')).toEqual([]);
    expect(await ids('is_archived=true')).toEqual([custom]);
    expect((await ids('is_archived=false')).length).toBe(4);
    expect(await ids('is_recurring=false&sorting=name')).toEqual([custom, fixed900]);
    expect(await ids('is_recurring=true&is_archived=false&sorting=created_at')).toEqual([fixed300, free, meteredOnly]);
    const page = await s.call('GET', '/v1/products/?sorting=name&limit=2&page=3');
    expect(page.body.items.map((p: { id: string }) => p.id)).toEqual([meteredOnly]);
    expect(page.body.pagination).toEqual({ total_count: 5, max_page: 3 });
    expect(locs(await s.call('GET', '/v1/products/?sorting=price'))).toEqual([['query', 'sorting']]);
    expect(locs(await s.call('GET', '/v1/products/?is_recurring=maybe'))).toEqual([['query', 'is_recurring']]);
  });
});

describe('products over raw HTTP', () => {
  it('answers 401, 403 by scope and 404', async () => {
    expect((await call(srv.url, null, 'PATCH', '/v1/products/5d6e7f80-9a1b-4c2d-8e3f-405162738495', { name: 'x' })).status).toBe(401);
    const s = await sellerB(srv);
    const product = await post(s, { name: 'Scoped', prices: [{ amount_type: 'free' }] });
    const reader = await sellerB(srv, ['products:read']);
    const denied = await reader.call('PATCH', `/v1/products/${product.body.id}`, { name: 'Nope' });
    expect(denied.status).toBe(403);
    expect(denied.body).toEqual({ error: 'NotPermitted', detail: 'Missing scope: products:write' });
    expect((await reader.call('POST', `/v1/products/${product.body.id}/benefits`, { benefits: [] })).status).toBe(403);
    const missing = await s.call('PATCH', '/v1/products/5d6e7f80-9a1b-4c2d-8e3f-405162738495', { name: 'Ghost' });
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ error: 'ResourceNotFound', detail: 'Product not found' });
    expect((await s.call('POST', '/v1/products/5d6e7f80-9a1b-4c2d-8e3f-405162738495/benefits', { benefits: [] })).status).toBe(404);
  });

  it('names every refused id and writes nothing when a PATCH is refused', async () => {
    const s = await sellerB(srv);
    const other = await sellerB(srv);
    const foreignMedia = await insertFile(srv, other.organization.id, 'product_media');
    const pending = await insertFile(srv, s.organization.id, 'product_media', { isUploaded: false });
    const downloadable = await insertFile(srv, s.organization.id, 'downloadable');
    const foreignField = await other.call('POST', '/v1/custom-fields/', { type: 'checkbox', slug: 'x', name: 'X', properties: {} });
    const foreignBenefit = await other.call('POST', '/v1/benefits/', { type: 'custom', description: 'Theirs', properties: {} });
    const product = await post(s, { name: 'Original', prices: [{ amount_type: 'fixed', price_amount: 700 }] });
    const id = product.body.id;

    const refused = await s.call('PATCH', `/v1/products/${id}`, {
      name: 'Renamed',
      medias: [foreignMedia.id, pending.id, downloadable.id],
      attached_custom_fields: [{ custom_field_id: foreignField.body.id, required: true }],
      prices: [{ id: '11111111-2222-4333-8444-555555555555' }],
    });
    expect(refused.status).toBe(422);
    expect(locs(refused)).toEqual([
      ['body', 'prices', 0],
      ['body', 'medias', 0],
      ['body', 'medias', 1],
      ['body', 'medias', 2],
      ['body', 'attached_custom_fields', 0, 'custom_field_id'],
    ]);
    expect(refused.body.detail[1]).toMatchObject({ msg: 'File does not exist or is not yet uploaded.', input: foreignMedia.id });
    const benefits = await s.call('POST', `/v1/products/${id}/benefits`, { benefits: [foreignBenefit.body.id] });
    expect(benefits.body.detail).toEqual([
      { type: 'value_error', loc: ['body', 'benefits', 0], msg: 'Benefit does not exist.', input: foreignBenefit.body.id },
    ]);
    const create = await post(s, { name: 'New', prices: [{ amount_type: 'free' }], medias: [foreignMedia.id] });
    expect(locs(create)).toEqual([['body', 'medias', 0]]);

    const after = await s.call('GET', `/v1/products/${id}`);
    expect(after.body).toMatchObject({ name: 'Original', medias: [], attached_custom_fields: [], benefits: [] });
    expect(after.body.prices.map((p: { id: string }) => p.id)).toEqual(product.body.prices.map((p: { id: string }) => p.id));
    expect(await outbox(srv, s.organization.id, 'product.updated')).toEqual([]);
    expect((await s.call('GET', '/v1/products/')).body.pagination.total_count).toBe(1);
  });

  it('validates bodies', async () => {
    const s = await sellerB(srv);
    const product = await post(s, { name: 'Body checks', prices: [{ amount_type: 'free' }] });
    const patch = (body: unknown) => s.call('PATCH', `/v1/products/${product.body.id}`, body);
    expect(locs(await patch({ prices: [] }))).toEqual([['body', 'prices']]);
    expect(locs(await patch({ prices: [{ amount_type: 'fixed', price_amount: 10.5 }] }))).toEqual([['body', 'prices', 0, 'price_amount']]);
    expect(locs(await patch({ prices: [{ id: 'not-a-uuid' }] }))).toEqual([['body', 'prices', 0, 'id']]);
    expect(locs(await patch({ metadata: { k: 1.5 } }))[0]!.slice(0, 3)).toEqual(['body', 'metadata', 'k']);
    const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, i]));
    expect(locs(await patch({ metadata: tooMany }))).toEqual([['body', 'metadata']]);
    expect(locs(await patch({ metadata: { ['k'.repeat(41)]: 'v' } }))[0]!.slice(0, 2)).toEqual(['body', 'metadata']);
    expect(locs(await patch({ metadata: { k: 'v'.repeat(501) } }))[0]!.slice(0, 3)).toEqual(['body', 'metadata', 'k']);
    expect(locs(await patch({ medias: ['nope'] }))).toEqual([['body', 'medias', 0]]);
    expect(locs(await patch({ recurring_interval: 'month' }))).toEqual([['body', 'recurring_interval']]);
    expect((await patch({ recurring_interval: null, name: 'Still one-time' })).body.name).toBe('Still one-time');
    const custom = await post(s, { name: 'Custom', prices: [{ amount_type: 'custom', minimum_amount: 500, maximum_amount: 100 }] });
    expect(locs(custom)).toEqual([['body', 'prices', 0, 'maximum_amount']]);
    const preset = await post(s, { name: 'Preset', prices: [{ amount_type: 'custom', minimum_amount: 500, preset_amount: 100 }] });
    expect(locs(preset)).toEqual([['body', 'prices', 0, 'preset_amount']]);
    expect(locs(await s.call('POST', `/v1/products/${product.body.id}/benefits`, { benefits: ['x'] }))).toEqual([['body', 'benefits', 0]]);
    // Lengths count characters, as the OpenAPI document's minLength and maxLength do: an emoji is one.
    expect(locs(await patch({ name: 'E🚀' }))).toEqual([['body', 'name']]);
    const rockets = '🚀'.repeat(255);
    const long = await patch({ name: rockets, metadata: { note: '🚀'.repeat(500) } });
    expect(long.status).toBe(200);
    expect(long.body.name).toBe(rockets);
    expect((await s.call('GET', `/v1/products/${product.body.id}`)).body.metadata.note).toBe('🚀'.repeat(500));
    expect(locs(await patch({ name: `${rockets}🚀` }))).toEqual([['body', 'name']]);
  });
});

describe('tenant isolation', () => {
  it("never shows or changes another organization's products", async () => {
    const a = await sellerB(srv);
    const b = await sellerB(srv);
    const benefit = await a.call('POST', '/v1/benefits/', { type: 'custom', description: 'A perk', properties: {} });
    const product = await post(a, { name: 'A product', prices: [{ amount_type: 'free' }] });
    await a.call('POST', `/v1/products/${product.body.id}/benefits`, { benefits: [benefit.body.id] });
    const id = product.body.id;
    expect((await b.call('GET', `/v1/products/${id}`)).status).toBe(404);
    expect((await b.call('PATCH', `/v1/products/${id}`, { name: 'Hijacked' })).status).toBe(404);
    expect((await b.call('POST', `/v1/products/${id}/benefits`, { benefits: [] })).status).toBe(404);
    for (const q of [`organization_id=${a.organization.id}`, `id=${id}`, `benefit_id=${benefit.body.id}`, '']) {
      expect((await b.call('GET', `/v1/products/?${q}`)).body).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
    }
    // B cannot attach A's benefit to its own product either.
    const own = await post(b, { name: 'B product', prices: [{ amount_type: 'free' }] });
    expect(locs(await b.call('POST', `/v1/products/${own.body.id}/benefits`, { benefits: [benefit.body.id] }))).toEqual([['body', 'benefits', 0]]);
    const stillA = await a.call('GET', `/v1/products/${id}`);
    expect(stillA.body).toMatchObject({ name: 'A product', benefits: [{ id: benefit.body.id }] });
  });
});
