/** Checkouts past `expires_at` become `expired` (the sweeper's batches; the per-checkout activity). */
import { LockMode, raw } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Checkout } from './entities.ts';
import { CHECKOUT_POPULATE, serializeCheckout } from './schemas.ts';

/**
 * Marks the checkout `expired` if it is still open and past `expires_at`, writing `checkout.updated`
 * (idempotent; used by the per-checkout expiry workflow's activity, which only runs started before the
 * sweeper replaced it still call). `retryAt` when it is open but not yet due.
 */
export async function expireCheckoutById(
  em: EntityManager,
  checkoutId: string,
  publicUrl: string,
): Promise<{ status: string | null; retryAt: string | null }> {
  return em.transactional(async (tx) => {
    const c = await tx.findOne(Checkout, { id: checkoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!c) return { status: null, retryAt: null };
    if (c.status !== 'open') return { status: c.status, retryAt: null };
    if (c.expiresAt.getTime() > Date.now()) return { status: c.status, retryAt: c.expiresAt.toISOString() };
    c.status = 'expired';
    await tx.flush();
    await tx.populate(c, CHECKOUT_POPULATE);
    emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, publicUrl));
    await tx.flush();
    return { status: 'expired', retryAt: null };
  });
}

export interface ExpiredBatch {
  /** How many checkouts this call marked expired. */
  expired: number;
  /** The earliest `expires_at` of the checkouts still open (ISO), null when none is. */
  nextExpiresAt: string | null;
  /** The database clock when `nextExpiresAt` was read (ISO). */
  now: string;
}

/**
 * One batch of the checkout-expiry sweeper, in one transaction: marks up to `limit` open checkouts whose
 * `expires_at` has passed (database clock), earliest first, `expired`, writing one `checkout.updated`
 * each (the same payload as `expireCheckoutById`). Rows another transaction holds (a buyer's update or
 * confirmation) are skipped, not waited for: the next batch looks again. Idempotent.
 * The due open checkouts are found through the partial index `checkouts_open_expires_at_index`.
 */
export async function expireDueCheckouts(em: EntityManager, publicUrl: string, limit: number): Promise<ExpiredBatch> {
  return em.transactional(async (tx) => {
    const due = await tx.find(
      Checkout,
      { status: 'open', expiresAt: { $lte: raw('now()') } },
      { orderBy: { expiresAt: 'asc' }, limit, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    if (due.length) {
      for (const c of due) c.status = 'expired';
      // Flushed before serializing, so the events carry the new modified_at.
      await tx.flush();
      await tx.populate(due, CHECKOUT_POPULATE);
      for (const c of due) emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, publicUrl));
      await tx.flush();
    }
    const [next] = await tx.execute<{ next: Date | string | null; now: Date | string }[]>(
      `select min("expires_at") as "next", now() as "now" from "checkouts" where "status" = 'open'`,
    );
    const iso = (v: Date | string) => new Date(v).toISOString();
    return { expired: due.length, nextExpiresAt: next?.next == null ? null : iso(next.next), now: iso(next!.now) };
  });
}
