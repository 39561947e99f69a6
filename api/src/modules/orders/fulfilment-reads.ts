/**
 * The reads of the checkout fulfilment (fulfilment.ts) in plain SQL: the products' read models its
 * events embed, the product's benefit links under a share lock, and an upgraded subscription's grants
 * the new product does not have. `fulfilmentStart` reads the first two and whether an order exists in one statement.
 */
import type { EntityManager } from '../../kit/db.ts';
import { Benefit } from '../benefits/entities.ts';
import type { Checkout } from '../checkouts/entities.ts';
import type { CheckoutProductsRead } from '../checkouts/schemas.ts';
import type { ProductRead } from '../products/schemas.ts';
import { productJsonSql } from '../products/read-sql.ts';

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

/** What the fulfilment reads before it writes (`fulfilmentStart`). */
export interface FulfilmentStart {
  /** The checkout's order, when an earlier attempt committed it. */
  existingOrderId: string | null;
  /** The product's live benefits and their types, in order. */
  links: { benefit_id: string; type: string }[];
  /** Their benefits, entities of the transaction (the grants' events embed them). */
  benefits: Map<string, Benefit>;
  /** The read models of the checkout's products (in the checkout's order) and of the product bought. */
  read: CheckoutProductsRead;
}

const BENEFIT_COLUMNS = ['id', 'created_at', 'modified_at', 'organization_id', 'type', 'description', 'is_tax_applicable', 'selectable', 'deletable', 'properties', 'deleted_at'] as const;

/**
 * In one statement: the checkout's order if an earlier attempt committed it; the products' read models
 * built by PostgreSQL (`productJsonSql`, the JSON `serializeProduct` builds), which the events embed;
 * the product's live benefit links with their benefits' rows, which become entities of `tx` without a
 * query of their own. The links are share-locked, so a change of the product's benefits
 * (product-sync.ts) waits for this transaction and then sees its grants.
 */
export async function fulfilmentStart(tx: EntityManager, c: Checkout): Promise<FulfilmentStart> {
  const rows = await tx.execute<Record<string, unknown>[]>(
    `select o.existing_order_id, o.products, ${BENEFIT_COLUMNS.map((col) => `l.${col}`).join(', ')}
       from (select (select id from orders where checkout_id = ?) as existing_order_id,
                    (select json_agg(json_build_object('id', x.id, 'product', ${productJsonSql('x.id')},
                                                       'ord', (select min(cp.id) from checkout_products cp where cp.checkout_id = ? and cp.product_id = x.id)))
                       from products x
                      where x.id = ? or x.id in (select cp.product_id from checkout_products cp where cp.checkout_id = ?)) as products) o
       left join lateral (select b.*, pb."order" as link_order from product_benefits pb join benefits b on b.id = pb.benefit_id
                           where pb.product_id = ? and b.deleted_at is null order by pb."order" for share of pb) l on true
      order by l.link_order`,
    [c.id, c.id, c.product.id, c.id, c.product.id],
  );
  const first = rows[0]!;
  const all = (first.products ?? []) as { id: string; product: ProductRead; ord: string | number | null }[];
  const product = all.find((r) => r.id === c.product.id);
  if (!product) throw new Error(`checkout ${c.id}: its product ${c.product.id} is gone`);
  const products = all
    .filter((r) => r.ord !== null)
    .sort((a, b) => Number(a.ord) - Number(b.ord))
    .map((r) => r.product);
  const links: FulfilmentStart['links'] = [];
  const benefits = new Map<string, Benefit>();
  for (const row of rows) {
    if (row.id == null) continue;
    const id = row.id as string;
    links.push({ benefit_id: id, type: row.type as string });
    benefits.set(id, tx.map(Benefit, Object.fromEntries(BENEFIT_COLUMNS.map((col) => [col, row[col]]))));
  }
  return { existingOrderId: (first.existing_order_id as string | null) ?? null, links, benefits, read: { products, product: product.product } };
}
