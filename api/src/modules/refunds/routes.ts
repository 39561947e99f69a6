/**
 * /v1/refunds: create (`refunds:write`) and list (`refunds:read`). A create reserves the amount
 * under the order's row lock and answers the pending refund (201); the `refund:<id>` workflow
 * (recorded in the same transaction, started after commit) refunds at the processor and settles the order.
 */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { Refund } from './entities.ts';
import { refundCreateSchema, refundSchema, serializeRefund } from './schemas.ts';
import { requestRefund } from './service.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const READ: AuthRequirement = sellerAuth('refunds:read');
const WRITE: AuthRequirement = sellerAuth('refunds:write');
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

const listSchema = listOf(refundSchema);

export const routes: RouteSpec[] = [
  createRoute({
    path: '/v1/refunds/',
    summary: 'Refund part or all of an order',
    tags: ['refunds'],
    auth: WRITE,
    body: refundCreateSchema,
    response: refundSchema,
    create: (tx, { body, principal, deps, afterCommit }) => requestRefund(tx, afterCommit, deps, principal, body),
  }),
  route({
    method: 'get',
    path: '/v1/refunds/',
    summary: 'List refunds',
    tags: ['refunds'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      id: queryList(z.uuid()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      order_id: queryList(z.uuid()).optional(),
      subscription_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      succeeded: boolQuery.optional(),
      sorting: sortingQuery(['created_at', 'amount']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.id) where.id = { $in: query.id };
      if (query.order_id) where.order = { $in: query.order_id };
      if (query.subscription_id) where.subscription = { $in: query.subscription_id };
      if (query.customer_id) where.customer = { $in: query.customer_id };
      if (query.succeeded !== undefined) where.status = query.succeeded ? 'succeeded' : { $ne: 'succeeded' };
      const [items, total] = await findAndCountInOneSnapshot(em, Refund, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeRefund), total, query);
    },
  }),
];
