/**
 * One query behind the seller's and the customer's subscription lists: the caller gives the scope
 * (the seller's organizations, or the session customer within their checkout's reach) and its
 * populate; the filters, sorting and page are the same.
 */
import { z } from 'zod/v4';
import { findAndCountInOneSnapshot, type EntityManager } from '../../kit/db.ts';
import { pageOffset, toOrderBy } from '../../kit/pagination.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from './entities.ts';

export interface SubscriptionListQuery {
  page: number;
  limit: number;
  sorting: string[];
  product_id?: string[];
  customer_id?: string[];
  discount_id?: string[];
  active?: boolean | null;
  /** Part of the product's name. */
  query?: string | null;
}

/** `?active=true|false|1|0`: only active (trialing or active) subscriptions, or only the others. */
export const activeQuery = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1').nullish();

/** Relations sort by what a person reads (as the order lists do): email, product, discount and organization names. */
const SORT_COLUMNS = {
  customer: 'customer.email',
  started_at: 'startedAt',
  current_period_end: 'currentPeriodEnd',
  product: 'product.name',
  discount: 'discount.name',
  organization: 'organization.name',
};

/** A page of the subscriptions within `scope` that match `q`, populated with `populate`, and their total. */
export async function listSubscriptions(
  em: EntityManager,
  scope: Record<string, unknown>,
  q: SubscriptionListQuery,
  populate: readonly string[],
): Promise<[Subscription[], number]> {
  // The scope's keys (organization, customer, or an $and of a checkout's reach) never meet the filters' keys.
  const where: Record<string, unknown> = { ...scope };
  if (q.query) {
    const product: Record<string, unknown> = { name: { $ilike: `%${q.query.replace(/[%_\\]/g, '\\$&')}%` } };
    if (q.product_id) product.id = { $in: q.product_id };
    where.product = product;
  } else if (q.product_id) {
    where.product = { $in: q.product_id };
  }
  if (q.customer_id) where.customer = { $in: q.customer_id };
  if (q.discount_id) where.discount = { $in: q.discount_id };
  if (q.active != null) where.status = q.active ? { $in: ACTIVE_SUBSCRIPTION_STATUSES } : { $nin: ACTIVE_SUBSCRIPTION_STATUSES };
  const [items, total] = await findAndCountInOneSnapshot(em, Subscription, where, {
    orderBy: [...toOrderBy(q.sorting, SORT_COLUMNS), { id: 'asc' }],
    ...pageOffset(q),
  });
  if (items.length) await em.populate(items, populate as never);
  return [items, total];
}
