/**
 * Populating a checkout only when what its rules read (CHECKOUT_RULES_POPULATE) is not loaded yet.
 * MikroORM's `populate` queries every path again even when it is loaded (several statements and
 * their hydration for a checkout's products), so a transaction that finds the graph from an earlier
 * step of the same request already in its identity map skips it.
 */
import { wrap } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import type { Product } from '../products/entities.ts';
import type { Checkout } from './entities.ts';
import { CHECKOUT_RULES_POPULATE } from './product-reads.ts';

const loaded = (e: object | null | undefined) => e == null || wrap(e).isInitialized();

function productLoaded(p: Product): boolean {
  return (
    loaded(p) &&
    p.prices.isInitialized(true) &&
    p.prices.getItems().every((pr) => loaded(pr.meter)) &&
    p.attachedCustomFields.isInitialized(true) &&
    p.attachedCustomFields.getItems().every((f) => loaded(f.customField))
  );
}

/** Whether everything the checkout's rules read is loaded. */
export function checkoutRulesLoaded(c: Checkout): boolean {
  return (
    loaded(c.organization) &&
    loaded(c.productPrice) &&
    loaded(c.discount) &&
    loaded(c.customer) &&
    productLoaded(c.product) &&
    c.products.isInitialized(true) &&
    c.products.getItems().every(productLoaded)
  );
}

/** `em.populate(c, CHECKOUT_RULES_POPULATE)` unless it is loaded already. */
export async function ensureCheckoutRules(em: EntityManager, c: Checkout): Promise<void> {
  if (!checkoutRulesLoaded(c)) await em.populate(c, CHECKOUT_RULES_POPULATE);
}
