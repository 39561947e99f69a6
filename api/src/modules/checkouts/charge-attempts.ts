/**
 * A checkout's charges outside the confirmation's transactions: the idempotency key of each attempt,
 * refunds of charges that get no order, and the sweeper's settling of attempts a dead process left pending.
 */
import { LockMode, raw } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import type { Logger } from '../../kit/logger.ts';
import type { PaymentProcessor } from '../payments/index.ts';
import { Checkout, CheckoutChargeAttempt } from './entities.ts';

/** The idempotency key of a checkout's charge (the first attempt's has no suffix, as before attempts were counted). */
export function chargeKey(checkoutId: string, tokenId: string, attempt: number): string {
  return attempt === 0 ? `checkout:${checkoutId}:charge:${tokenId}` : `checkout:${checkoutId}:charge:${tokenId}:${attempt}`;
}

/**
 * Refunds a charge of the checkout that will have no order (one refund per charge: the idempotency
 * key is the charge's, whichever path gives it back), then
 * moves the checkout to its next charge attempt, so that paying again makes a new charge rather than
 * replaying this one. Dying between the two would let a retry with the same token replay the refunded
 * charge; the refund comes first because the other order could leave the buyer's money taken.
 */
export async function refundUnfulfilledCharge(
  em: EntityManager,
  processor: PaymentProcessor,
  input: { checkoutId: string; chargeId: string; amount: number; attemptKey?: string },
): Promise<void> {
  await processor.refund({ chargeId: input.chargeId, amount: input.amount, idempotencyKey: `checkout:${input.checkoutId}:refund:${input.chargeId}` });
  await em.fork().transactional(async (tx) => {
    await tx.nativeUpdate(Checkout, { id: input.checkoutId }, { chargeAttempt: raw('"charge_attempt" + 1') });
    const which = input.attemptKey ? { $or: [{ chargeId: input.chargeId }, { idempotencyKey: input.attemptKey }] } : { chargeId: input.chargeId };
    await tx.nativeUpdate(
      CheckoutChargeAttempt,
      { checkout: input.checkoutId, ...which },
      { status: 'refunded', chargeId: input.chargeId, settledAt: new Date() },
    );
  });
}

/** Records a pending charge attempt's outcome; answers whether it was still pending. */
export async function settleAttempt(
  em: EntityManager,
  idempotencyKey: string,
  status: CheckoutChargeAttempt['status'],
  chargeId: string | null,
): Promise<boolean> {
  return (await em.nativeUpdate(CheckoutChargeAttempt, { idempotencyKey, status: 'pending' }, { status, chargeId, settledAt: new Date() })) > 0;
}

/**
 * Settles the charge attempts left `pending` for longer than `graceSeconds` (their confirmation died
 * between the processor call and recording its outcome): asks the processor again with the same
 * idempotency key, which answers the first outcome (or, had the first call never arrived, makes the
 * charge now). Under the checkout's lock: kept (`confirmed`) if the checkout holds that charge, else
 * claimed for a refund (`refunding`, so a late step 3 of that confirmation is refused); then refunded,
 * the checkout moving to its next charge attempt. A `refunding` attempt left by a crash is refunded
 * again (one refund per charge: the key is the charge's). An attempt the processor cannot answer for
 * now stays for the next round. Answers how many were settled and when the next falls due (ISO).
 */
export async function settleAbandonedCharges(
  em: EntityManager,
  processor: PaymentProcessor,
  opts: { graceSeconds: number; limit: number; log?: Pick<Logger, 'warn'> },
): Promise<{ settled: number; nextDueAt: string | null }> {
  const due = await em
    .fork()
    .find(
      CheckoutChargeAttempt,
      { status: { $in: ['pending', 'refunding'] }, createdAt: { $lte: new Date(Date.now() - opts.graceSeconds * 1000) } },
      { orderBy: { createdAt: 'asc' }, limit: opts.limit },
    );
  let settled = 0;
  for (const a of due) {
    const checkoutId = a.checkout.id;
    try {
      let chargeId = a.status === 'refunding' ? a.chargeId : null;
      if (a.status === 'pending') {
        const result = await processor.confirmPayment(a.request);
        chargeId = await em.fork().transactional(async (tx) => {
          const c = await tx.findOne(Checkout, { id: checkoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
          const keep = result.status === 'declined' || c?.processorChargeId === result.chargeId;
          const outcome = result.status === 'declined' ? 'declined' : keep ? 'confirmed' : 'refunding';
          const claimed = await settleAttempt(tx, a.idempotencyKey, outcome, result.chargeId);
          return claimed && !keep ? result.chargeId : null;
        });
      }
      if (chargeId) {
        await refundUnfulfilledCharge(em, processor, { checkoutId, chargeId, amount: a.request.amount });
      }
      settled++;
    } catch (err) {
      // The processor or the database failed: the attempt stays as it was for the next round.
      opts.log?.warn({ err, checkoutId, attemptStatus: a.status }, 'abandoned charge attempt not settled; tried again next round');
    }
  }
  const [next] = await em
    .fork()
    .execute<{ next: Date | string | null }[]>(
      `select min("created_at") as "next" from "checkout_charge_attempts" where "status" in ('pending', 'refunding')`,
    );
  const nextDueAt = next?.next == null ? null : new Date(new Date(next.next).getTime() + opts.graceSeconds * 1000).toISOString();
  return { settled, nextDueAt };
}
