/** /v1/orders: the seller's list and read (`orders:read`). Orders are written by the checkout workflow. */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { Order } from './entities.ts';
import { ORDER_POPULATE, orderSchema, serializeOrder } from './schemas.ts';

const READ: AuthRequirement = { kinds: ['user', 'organization', 'oauth2'], scopes: ['orders:read'] };

const listSchema = z.object({
  items: z.array(orderSchema),
  pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
});

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/orders/',
    summary: 'List orders',
    tags: ['orders'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      product_id: queryList(z.uuid()).optional(),
      product_billing_type: queryList(z.enum(['one_time', 'recurring'])).optional(),
      discount_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      checkout_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'amount', 'net_amount']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      let orgIds = await visibleOrganizationIds(em, principal);
      if (query.organization_id) orgIds = orgIds.filter((id) => query.organization_id!.includes(id));
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.product_id) where.product = { $in: query.product_id };
      if (query.discount_id) where.discount = { $in: query.discount_id };
      if (query.customer_id) where.customer = { $in: query.customer_id };
      if (query.checkout_id) where.checkout = { $in: query.checkout_id };
      const billing = new Set(query.product_billing_type ?? []);
      if (billing.size === 1) {
        where.product = { ...(where.product as object), recurringInterval: billing.has('recurring') ? { $ne: null } : null };
      }
      const [items, total] = await em.findAndCount(Order, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt', amount: 'netAmount', net_amount: 'netAmount' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      if (items.length) await em.populate(items, ORDER_POPULATE);
      return paginated(items.map(serializeOrder), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/orders/:id',
    summary: 'Get an order',
    tags: ['orders'],
    auth: READ,
    params: z.object({ id: z.uuid() }),
    response: orderSchema,
    async handler({ params, principal, em }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const o = await em.findOne(Order, { id: params.id, organization: { $in: orgIds } }, { populate: ORDER_POPULATE });
      if (!o) throw ResourceNotFound('Order not found');
      return serializeOrder(o);
    },
  }),
];
