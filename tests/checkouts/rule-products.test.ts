/**
 * The products a checkout's creation loads for its rules (`loadRuleProducts`, checkouts/product-reads.ts:
 * one statement, rows mapped to entities) against the ORM's populate of the same paths
 * (`PRODUCT_RULES_POPULATE`): the same products, prices (archived and metered ones with their meter,
 * in the same order) and attached custom fields (with their field, in their order), field by field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wrap } from '@mikro-orm/core';
import { Product } from '../../api/src/modules/products/entities.ts';
import { loadRuleProducts, PRODUCT_RULES_POPULATE } from '../../api/src/modules/checkouts/product-reads.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CHECKOUT_SCOPES, call, createProduct, post, type Seller } from './helpers.ts';

let srv: TestServer;
let s: Seller;
let other: Seller;

beforeAll(async () => {
  srv = await startTestServer();
  s = await sellerWithSdk(srv, [...CHECKOUT_SCOPES, 'meters:write', 'custom_fields:write']);
  other = await sellerWithSdk(srv, CHECKOUT_SCOPES);
});
afterAll(async () => {
  await srv?.close();
});

/** A product's entity graph as plain data: its columns, its prices with their meter, its attached fields with their field. */
function graph(p: Product) {
  return {
    product: wrap(p).toObject(['prices', 'attachedCustomFields', 'productBenefits', 'medias'] as never),
    // Prices created in one request share their created_at (the ORM orders by it alone): ties by id.
    prices: [...p.prices.getItems()]
      .sort((x, y) => x.createdAt.getTime() - y.createdAt.getTime() || x.id.localeCompare(y.id))
      .map((pr) => ({ ...wrap(pr).toObject(['product', 'meter'] as never), meter: pr.meter ? wrap(pr.meter).toObject() : null })),
    fields: p.attachedCustomFields.getItems().map((f) => ({ ...wrap(f).toObject(['product', 'customField'] as never), customField: wrap(f.customField).toObject() })),
  };
}

describe('loadRuleProducts', () => {
  it('loads what the populate loads: prices (archived, metered with their meter) in order, custom fields with their field in order', async () => {
    const meter = await call(srv.url, s.token, 'POST', '/v1/meters/', { name: 'Calls', filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
    expect(meter.status).toBe(201);
    const company = await post(srv, s, '/v1/custom-fields/', { type: 'text', slug: 'company', name: 'Company', properties: { min_length: 2 } });
    const seats = await post(srv, s, '/v1/custom-fields/', { type: 'number', slug: 'seats', name: 'Seats', properties: { ge: 1 } });
    const rich = await createProduct(srv.url, s.token, {
      name: 'Rich',
      recurring_interval: 'month',
      prices: [
        { amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' },
        { amount_type: 'metered_unit', meter_id: meter.body.id, unit_amount: 5, price_currency: 'usd' },
      ],
      attached_custom_fields: [
        { custom_field_id: seats.id, required: false },
        { custom_field_id: company.id, required: true },
      ],
    });
    // A second fixed price archives the first (one static price per product).
    const repriced = await call(srv.url, s.token, 'PATCH', `/v1/products/${rich.id}`, {
      prices: [{ id: rich.prices.find((p) => p.amount_type === 'metered_unit')!.id }, { amount_type: 'fixed', price_amount: 1200, price_currency: 'usd' }],
    });
    expect(repriced.status).toBe(200);
    const plain = await createProduct(srv.url, s.token, { name: 'Plain', prices: [{ amount_type: 'free' }] });
    const foreign = await createProduct(srv.url, other.token, { name: 'Foreign', prices: [{ amount_type: 'free' }] });
    const orgIds = [(rich as unknown as { organization_id: string }).organization_id];

    const ids = [rich.id, plain.id, foreign.id];
    const viaSql = await loadRuleProducts(srv.deps.orm.em.fork(), ids, orgIds);
    const viaOrm = await srv.deps.orm.em.fork().find(Product, { id: { $in: ids }, organization: { $in: orgIds } }, { populate: PRODUCT_RULES_POPULATE });

    expect([...viaSql.keys()].sort()).toEqual([rich.id, plain.id].sort());
    expect(viaOrm.map((p) => p.id).sort()).toEqual([rich.id, plain.id].sort());
    const richSql = graph(viaSql.get(rich.id)!);
    expect(richSql.prices.map((p) => [p.amountType, p.isArchived, p.meter?.id ?? null, p.unitAmount]).sort()).toEqual(
      [
        ['fixed', true, null, null],
        ['metered_unit', false, meter.body.id, '5.000000000000'],
        ['fixed', false, null, null],
      ].sort(),
    );
    expect(richSql.fields.map((f) => [f.customField.slug, f.required])).toEqual([['seats', false], ['company', true]]);
    for (const p of viaOrm) expect(graph(viaSql.get(p.id)!)).toEqual(graph(p));
  });

  it('finds nothing for no organization', async () => {
    const plain = await createProduct(srv.url, s.token, { name: 'Alone', prices: [{ amount_type: 'free' }] });
    expect((await loadRuleProducts(srv.deps.orm.em.fork(), [plain.id], [])).size).toBe(0);
  });
});
