/**
 * The read models of a checkout's products built by PostgreSQL in one statement (`productJsonSql` of
 * products/read-sql.ts, the JSON `serializeProduct` builds): the checkout's creation and confirmation
 * embed them in their response and event without loading each product's benefits, media and files
 * through the ORM (only the prices and custom fields their rules read are loaded).
 */
import type { EntityManager } from '../../kit/db.ts';
import { CustomField } from '../custom-fields/entities.ts';
import { Meter } from '../meters/entities.ts';
import { Product, ProductCustomField, ProductPrice } from '../products/entities.ts';
import { productJsonSql } from '../products/read-sql.ts';
import type { ProductRead } from '../products/schemas.ts';
import type { Checkout } from './entities.ts';
import type { CheckoutProductsRead } from './schemas.ts';

/** What the checkout's rules read of a product: its prices (with their meter) and attached custom fields. */
export const PRODUCT_RULES_POPULATE = ['prices.meter', 'attachedCustomFields.customField'] as const;

type Json = Record<string, unknown>;

/**
 * The organizations' products among `ids` with what the checkout's rules read
 * (`PRODUCT_RULES_POPULATE`: every price with its meter, the attached custom fields with their field),
 * by id: one statement, the rows mapped to entities of `em` and the collections filled in the ORM's
 * order (prices by created_at, custom fields by order), instead of the populate's three. As the ORM
 * reads them: a price's `unit_amount` as the numeric's text, a meter without its lazy rollup columns.
 * With `reads`, the same statement also answers each product's read model (`productJsonSql`) into it.
 */
export async function loadRuleProducts(
  em: EntityManager,
  ids: string[],
  orgIds: string[],
  reads?: Map<string, ProductRead>,
): Promise<Map<string, Product>> {
  if (!ids.length || !orgIds.length) return new Map();
  const rows = await em.execute<{ p: Json; prices: Json[]; meters: Json[]; fields: Json[]; custom_fields: Json[]; read?: ProductRead }[]>(
    `select to_jsonb(p) as p,${reads ? ` ${productJsonSql('k.product_id')} as read,` : ''}
            coalesce((select jsonb_agg(to_jsonb(pp) || jsonb_build_object('unit_amount', pp.unit_amount::text) order by pp.created_at, pp.id)
                        from product_prices pp where pp.product_id = p.id), '[]') as prices,
            coalesce((select jsonb_agg(to_jsonb(m) - 'rollup' - 'rolled_snapshot') from meters m where m.id in (select pp.meter_id from product_prices pp where pp.product_id = p.id)), '[]') as meters,
            coalesce((select jsonb_agg(to_jsonb(f) order by f."order", f.id) from product_custom_fields f where f.product_id = p.id), '[]') as fields,
            coalesce((select jsonb_agg(to_jsonb(cf)) from custom_fields cf
                       where cf.id in (select f.custom_field_id from product_custom_fields f where f.product_id = p.id)), '[]') as custom_fields
       from products p cross join lateral (select p.id as product_id) k
      where p.id in (${ids.map(() => '?').join(', ')}) and p.organization_id in (${orgIds.map(() => '?').join(', ')})`,
    [...ids, ...orgIds],
  );
  const out = new Map<string, Product>();
  for (const r of rows) {
    for (const m of r.meters) em.map(Meter, m);
    for (const f of r.custom_fields) em.map(CustomField, f);
    const product = em.map(Product, r.p);
    product.prices.hydrate(r.prices.map((pp) => em.map(ProductPrice, pp)));
    product.attachedCustomFields.hydrate(r.fields.map((f) => em.map(ProductCustomField, f)));
    out.set(product.id, product);
    if (reads && r.read) reads.set(product.id, r.read);
  }
  return out;
}

/**
 * What the checkout's rules read (its products' prices and custom fields, its price, discount,
 * organization and customer): `CHECKOUT_POPULATE` without the products' benefits and media, which
 * only the read models show (`checkoutProductsJson`).
 */
export const CHECKOUT_RULES_POPULATE = [
  ...PRODUCT_RULES_POPULATE.map((path) => `products.${path}` as const),
  ...PRODUCT_RULES_POPULATE.map((path) => `product.${path}` as const),
  'productPrice',
  'discount',
  'organization',
  'customer',
] as const;

/** The read models of `c.products` (in their order; `productIds` when the collection is not loaded) and of `c.product`, from the rows this transaction sees. */
export async function checkoutProductsJson(em: EntityManager, c: Checkout, productIds?: string[]): Promise<CheckoutProductsRead> {
  const listed = productIds ?? c.products.getItems().map((p) => p.id);
  const ids = [...new Set([c.product.id, ...listed])];
  const rows = await em.execute<{ id: string; product: ProductRead }[]>(
    `select x.id, ${productJsonSql('x.id')} as product from products x where x.id in (${ids.map(() => '?').join(', ')})`,
    ids,
  );
  const byId = new Map(rows.map((r) => [r.id, r.product]));
  const read = (id: string) => {
    const p = byId.get(id);
    if (!p) throw new Error(`checkout ${c.id}: product ${id} is gone`);
    return p;
  };
  return { products: listed.map(read), product: read(c.product.id) };
}
