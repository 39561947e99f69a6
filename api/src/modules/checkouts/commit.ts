/** Committing a new checkout: shared by the checkouts, checkout-links and auth-payments endpoints. */
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { Checkout } from './entities.ts';
import { checkoutProductsJson } from './product-reads.ts';
import { serializeCheckoutWithProducts, type CheckoutOut } from './schemas.ts';

/**
 * Flushes a created checkout and writes `checkout.created`. Returns the committed checkout and its
 * seller read model (the event's data: the products' read models come from PostgreSQL,
 * `checkoutProductsJson`, so `build` needs to load only what the checkout's rules read). Its expiry
 * needs nothing here: the worker's checkout-expiry sweeper (one per task queue,
 * workflows/src/checkouts/checkout-expiry-sweeper.workflow.ts) finds it through `expires_at`.
 */
export async function commitNewCheckoutRead(
  em: EntityManager,
  deps: Pick<Deps, 'cfg'>,
  build: (tx: EntityManager) => Promise<Checkout | null>,
): Promise<{ checkout: Checkout; read: CheckoutOut } | null> {
  return em.transactional(async (tx) => {
    const c = await build(tx);
    if (!c) return null;
    await tx.flush();
    const read = serializeCheckoutWithProducts(c, deps.cfg.PUBLIC_URL, await checkoutProductsJson(tx, c));
    emitEvent(tx, c.organization.id, 'checkout.created', read);
    await tx.flush();
    return { checkout: c, read };
  });
}

/** `commitNewCheckoutRead` for callers that need only the checkout (its client secret). */
export async function commitNewCheckout(
  em: EntityManager,
  deps: Pick<Deps, 'cfg'>,
  build: (tx: EntityManager) => Promise<Checkout | null>,
): Promise<Checkout | null> {
  return (await commitNewCheckoutRead(em, deps, build))?.checkout ?? null;
}
