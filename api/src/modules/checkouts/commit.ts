/** Committing a new checkout: shared by the checkouts, checkout-links and auth-payments endpoints. */
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import type { Checkout } from './entities.ts';
import { CHECKOUT_POPULATE, serializeCheckout } from './schemas.ts';

/**
 * Flushes a created checkout and writes `checkout.created`. Returns the committed checkout (relations
 * loaded). Its expiry needs nothing here: the worker's checkout-expiry sweeper (one per task queue,
 * workflows/src/checkouts/checkout-expiry-sweeper.workflow.ts) finds it through `expires_at`.
 */
export async function commitNewCheckout(
  em: EntityManager,
  deps: Pick<Deps, 'cfg'>,
  build: (tx: EntityManager) => Promise<Checkout | null>,
): Promise<Checkout | null> {
  return em.transactional(async (tx) => {
    const c = await build(tx);
    if (!c) return null;
    await tx.flush();
    await tx.populate(c, CHECKOUT_POPULATE);
    emitEvent(tx, c.organization.id, 'checkout.created', serializeCheckout(c, deps.cfg.PUBLIC_URL));
    await tx.flush();
    return c;
  });
}
