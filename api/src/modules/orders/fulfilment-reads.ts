/**
 * The reads of the checkout fulfilment (fulfilment.ts) in plain SQL: the products' read models its
 * events embed, the product's benefit links under a share lock, and an upgraded subscription's grants
 * the new product does not have.
 */
import type { EntityManager } from '../../kit/db.ts';
import type { Checkout } from '../checkouts/entities.ts';
import type { CheckoutProductsRead } from '../checkouts/schemas.ts';
import type { ProductRead } from '../products/schemas.ts';
import { productJsonSql } from '../products/read-sql.ts';

/**
 * The read models of the checkout's products (in the checkout's order) and of the product bought, built
 * by PostgreSQL in one statement (`productJsonSql`): the events of the fulfilment embed them, and
 * loading each product's prices, benefits, media and custom fields through the ORM took five.
 */
export async function checkoutProductsRead(tx: EntityManager, c: Checkout): Promise<CheckoutProductsRead> {
  const rows = await tx.execute<{ id: string; product: ProductRead; ord: string | number | null }[]>(
    `select x.id, ${productJsonSql('x.id')} as product,
            (select min(cp.id) from checkout_products cp where cp.checkout_id = ? and cp.product_id = x.id) as ord
       from products x
      where x.id = ? or x.id in (select cp.product_id from checkout_products cp where cp.checkout_id = ?)`,
    [c.id, c.product.id, c.id],
  );
  const product = rows.find((r) => r.id === c.product.id);
  if (!product) throw new Error(`checkout ${c.id}: its product ${c.product.id} is gone`);
  const products = rows
    .filter((r) => r.ord !== null)
    .sort((a, b) => Number(a.ord) - Number(b.ord))
    .map((r) => r.product);
  return { products, product: product.product };
}

/**
 * The product's live benefits and their types, in order; the links are share-locked, so a change of
 * the product's benefits (product-sync.ts) waits for this transaction and then sees its grants.
 */
export async function benefitLinks(tx: EntityManager, productId: string): Promise<{ benefit_id: string; type: string }[]> {
  return tx.execute(
    `select pb.benefit_id, b.type from product_benefits pb join benefits b on b.id = pb.benefit_id
      where pb.product_id = ? and b.deleted_at is null order by pb."order" for share of pb`,
    [productId],
  );
}

/**
 * The subscription's unrevoked grants whose benefit the product (`links`) does not have: after an
 * upgrade, what only the previous plan granted.
 */
export async function grantsNotOnProduct(
  tx: EntityManager,
  subscriptionId: string,
  customerId: string,
  links: { benefit_id: string }[],
): Promise<{ benefit_id: string; type: string }[]> {
  const kept = new Set(links.map((l) => l.benefit_id));
  const rows = await tx.execute<{ benefit_id: string; type: string }[]>(
    `select distinct g.benefit_id, b.type from benefit_grants g join benefits b on b.id = g.benefit_id
      where g.subscription_id = ? and g.customer_id = ? and g.revoked_at is null`,
    [subscriptionId, customerId],
  );
  return rows.filter((r) => !kept.has(r.benefit_id));
}
