/** /v1/discounts: create, list, read, update and (soft) delete. */
import { containsPattern, findAndCountInOneSnapshot } from '../../kit/db.ts';
import { z } from 'zod/v4';
import type { AuthRequirement } from '../../kit/principals.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, deleteRoute, getByIdRoute, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { Discount } from './entities.ts';
import { discountCreateSchema, discountSchema, discountUpdateSchema, serializeDiscount } from './schemas.ts';
import { createDiscount, deleteDiscount, getVisibleDiscount, updateDiscount } from './service.ts';

const READ: AuthRequirement = sellerAuth('discounts:read');
const WRITE: AuthRequirement = sellerAuth('discounts:write');
const tags = ['discounts'];
const listSchema = listOf(discountSchema);

export const routes: RouteSpec[] = [
  createRoute({
    path: '/v1/discounts/',
    summary: 'Create a discount',
    tags,
    auth: WRITE,
    body: discountCreateSchema,
    response: discountSchema,
    create: (tx, { body, principal }) => createDiscount(tx, principal, body),
  }),
  route({
    method: 'get',
    path: '/v1/discounts/',
    summary: 'List discounts',
    tags,
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'name', 'code', 'redemptions_count']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds }, deletedAt: null };
      if (query.query) {
        const like = containsPattern(query.query);
        where.$or = [{ name: { $ilike: like } }, { code: { $ilike: like } }];
      }
      const [items, total] = await findAndCountInOneSnapshot(em, Discount, where, {
        populate: ['products'],
        orderBy: [
          ...toOrderBy(query.sorting, { created_at: 'createdAt', redemptions_count: 'redemptionsCount' }),
          { id: 'asc' },
        ],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeDiscount), total, query);
    },
  }),
  getByIdRoute({
    path: '/v1/discounts/:id',
    summary: 'Get a discount',
    tags,
    auth: READ,
    response: discountSchema,
    read: async ({ params, principal, em }) => serializeDiscount(await getVisibleDiscount(em, principal, params.id)),
  }),
  updateRoute({
    path: '/v1/discounts/:id',
    summary: 'Update a discount (type and duration never change; amounts are frozen once redeemed)',
    tags,
    auth: WRITE,
    body: discountUpdateSchema,
    response: discountSchema,
    update: (tx, { params, body, principal }) => updateDiscount(tx, principal, params.id, body),
  }),
  deleteRoute({
    path: '/v1/discounts/:id',
    summary: 'Delete a discount',
    tags,
    auth: WRITE,
    remove: (tx, { params, principal }) => deleteDiscount(tx, principal, params.id),
  }),
];
