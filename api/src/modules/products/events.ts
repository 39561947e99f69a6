/** `product.updated` with the fresh read model, for every change that touches products. */
import type { EntityManager } from '../../kit/db.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { Product } from './entities.ts';
import { PRODUCT_POPULATE, serializeProduct, type ProductRead } from './schemas.ts';

/** Flushes, reloads each product's relations and writes its `product.updated`; returns the read models. */
export async function emitProductsUpdated(tx: EntityManager, products: Product[]): Promise<ProductRead[]> {
  await tx.flush();
  const out: ProductRead[] = [];
  for (const product of products) {
    await tx.populate(product, PRODUCT_POPULATE, { refresh: true });
    const data = serializeProduct(product);
    emitEvent(tx, product.organization.id, 'product.updated', data);
    out.push(data);
  }
  await tx.flush();
  return out;
}
