/**
 * The read models of a checkout's products built by PostgreSQL in one statement (`productJsonSql` of
 * products/read-sql.ts, the JSON `serializeProduct` builds): the checkout's creation and confirmation
 * embed them in their response and event without loading each product's benefits, media and files
 * through the ORM (only the prices and custom fields their rules read are loaded).
 */
import type { EntityManager } from '../../kit/db.ts';
import { productJsonSql } from '../products/read-sql.ts';
import type { ProductRead } from '../products/schemas.ts';
import type { Checkout } from './entities.ts';
import type { CheckoutProductsRead } from './schemas.ts';

/** What the checkout's rules read of a product: its prices (with their meter) and attached custom fields. */
export const PRODUCT_RULES_POPULATE = ['prices.meter', 'attachedCustomFields.customField'] as const;

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
