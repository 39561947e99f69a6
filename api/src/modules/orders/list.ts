/**
 * One query behind the seller's and the customer's order lists: the caller gives the scope (the
 * seller's organizations, or the session customer within their checkout's reach) and its populate;
 * the filters, sorting and page are the same.
 */
import { z } from 'zod/v4';
import { findAndCountInOneSnapshot, type EntityManager } from '../../kit/db.ts';
import { pageOffset, paginationQuery } from '../../kit/pagination.ts';
import { queryList } from '../../kit/validation.ts';
import { Order } from './entities.ts';
import { orderOrderBy, orderProductFilter } from './schemas.ts';

/** The page and filters both order lists take (each adds its own). */
export const orderListQueryFields = {
  ...paginationQuery,
  organization_id: queryList(z.uuid()).optional(),
  product_id: queryList(z.uuid()).optional(),
  product_billing_type: queryList(z.enum(['one_time', 'recurring'])).optional(),
  product_price_type: queryList(z.enum(['one_time', 'recurring'])).optional(),
};

export interface OrderListQuery {
  page: number;
  limit: number;
  sorting: string[];
  product_id?: string[];
  product_billing_type?: string[];
  product_price_type?: string[];
  query?: string | null;
  discount_id?: string[];
  customer_id?: string[];
  checkout_id?: string[];
  subscription_id?: string[];
}

const IN_FILTERS = { discount_id: 'discount', customer_id: 'customer', checkout_id: 'checkout', subscription_id: 'subscription' } as const;

/** A page of the orders within `scope` that match `q`, populated with `populate`, and their total. */
export async function listOrders(
  em: EntityManager,
  scope: Record<string, unknown>,
  q: OrderListQuery,
  populate: readonly string[],
): Promise<[Order[], number]> {
  // The scope's keys (organization, customer, or an $and of a checkout's reach) never meet the filters' keys.
  const where: Record<string, unknown> = { ...scope };
  for (const [key, column] of Object.entries(IN_FILTERS)) {
    const ids = q[key as keyof typeof IN_FILTERS];
    if (ids) where[column] = { $in: ids };
  }
  const product = orderProductFilter(q);
  if (product) where.product = product;
  const [items, total] = await findAndCountInOneSnapshot(em, Order, where, {
    orderBy: [...orderOrderBy(q.sorting), { id: 'asc' }],
    ...pageOffset(q),
  });
  if (items.length) await em.populate(items, populate as never);
  return [items, total];
}
