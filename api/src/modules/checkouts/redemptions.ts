/** A checkout's discount redemption: reserved atomically in step 1, released when no order follows. */
import type { EntityManager } from '../../kit/db.ts';
import { fieldError } from '../../kit/errors.ts';
import { Discount } from '../discounts/entities.ts';
import { Checkout, DiscountRedemption } from './entities.ts';
import { notRedeemable } from './amounts.ts';

/** One redemption more, if the discount is still redeemable: one atomic conditional UPDATE. */
export async function incrementRedemptions(em: EntityManager, discountId: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update "discounts" set "redemptions_count" = "redemptions_count" + 1, "modified_at" = now()
      where "id" = ? and "deleted_at" is null
        and ("max_redemptions" is null or "redemptions_count" < "max_redemptions")
        and ("starts_at" is null or "starts_at" <= now()) and ("ends_at" is null or "ends_at" >= now())
      returning "id"`,
    [discountId],
  );
  return rows.length === 1;
}

export async function decrementRedemptions(em: EntityManager, discountId: string): Promise<void> {
  await em.execute(
    `update "discounts" set "redemptions_count" = greatest("redemptions_count" - 1, 0), "modified_at" = now() where "id" = ?`,
    [discountId],
  );
}

/**
 * Reserves one redemption of the checkout's discount for this checkout (reused when it already holds
 * one for that discount): a discount at its max_redemptions (or otherwise not redeemable) is a 422 on
 * `body.discount_id`. The discount row is only locked for the rest of the caller's (short) transaction.
 */
export async function reserveRedemption(em: EntityManager, c: Checkout): Promise<void> {
  const held = await em.findOne(DiscountRedemption, { checkout: c.id });
  const wanted = c.discount && c.isDiscountApplicable ? c.discount.id : null;
  if (held && held.discount.id === wanted) return;
  if (held) {
    // The buyer changed or removed the discount since an earlier attempt.
    await decrementRedemptions(em, held.discount.id);
    em.remove(held);
    await em.flush();
  }
  if (!wanted) return;
  if (!(await incrementRedemptions(em, wanted))) {
    const d = await em.findOne(Discount, { id: wanted }, { refresh: true });
    const why = (d && notRedeemable(d)) ?? 'Discount has reached its maximum redemptions.';
    throw fieldError(['body', 'discount_id'], why, 'value_error', wanted);
  }
  em.create(DiscountRedemption, { discount: wanted, checkout: c.id });
}

/** Releases a reserved redemption (a declined charge; compensation after a confirmed checkout fails). Idempotent. */
export async function releaseRedemption(em: EntityManager, checkoutId: string): Promise<boolean> {
  const r = await em.findOne(DiscountRedemption, { checkout: checkoutId });
  if (!r) return false;
  const deleted = await em.nativeDelete(DiscountRedemption, { id: r.id });
  if (deleted) await decrementRedemptions(em, r.discount.id);
  em.getUnitOfWork().unsetIdentity(r);
  return deleted > 0;
}
