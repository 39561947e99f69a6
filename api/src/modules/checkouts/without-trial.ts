import { LockMode } from '@mikro-orm/core';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Logger } from '../../kit/logger.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Checkout } from './entities.ts';
import { CHECKOUT_ALIAS, CHECKOUT_POPULATE, serializeCheckout, type CheckoutConfirm } from './schemas.ts';
import { CHECKOUT_SECRET_PREFIX, updateCheckout } from './service.ts';

/**
 * The checkout whose trial another confirmation redeemed first: recomputed (now charging the first
 * period) and announced. Only the checkout's row is locked: locking the product, price and
 * organization rows its query joins deadlocked with the winner's fulfilment inserting rows that
 * reference them. Tried three times; should it still fail, the buyer's next confirmation recomputes
 * the checkout anyway (and is refused once more), so the failure is logged, not answered.
 */
export async function withoutTrial(
  em: EntityManager,
  deps: { cfg: Pick<Config, 'PUBLIC_URL'>; log?: Pick<Logger, 'warn'> },
  key: string,
  by: 'id' | 'secret',
  update: Omit<CheckoutConfirm, 'confirmation_token_id'>,
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await em.fork().transactional(async (tx) => {
        const where = by === 'id' ? { id: key, status: 'open' as const } : { clientSecret: key, status: 'open' as const };
        const c = await tx.findOne(Checkout, where, { lockMode: LockMode.PESSIMISTIC_WRITE, lockTableAliases: [CHECKOUT_ALIAS] });
        if (!c) return;
        await tx.populate(c, CHECKOUT_POPULATE);
        await updateCheckout(tx, c, update, 'public');
        emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, deps.cfg.PUBLIC_URL));
        await tx.flush();
      });
    } catch (err) {
      if (attempt < 3) continue;
      deps.log?.warn({ err, checkout: key.startsWith(CHECKOUT_SECRET_PREFIX) ? '(by secret)' : key }, 'checkout not recomputed without its redeemed trial');
      return;
    }
  }
}
