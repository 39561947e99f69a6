/** /v1/discounts: create, list, read, update and (soft) delete. */
import { containsPattern } from '../../kit/db.ts';
import { z } from 'zod/v4';
import type { AuthRequirement } from '../../kit/principals.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { resolveWriteOrganization, scopedOrganizationIds } from '../organizations/scope.ts';
import { Discount } from './entities.ts';
import { discountCreateSchema, discountSchema, discountUpdateSchema, serializeDiscount } from './schemas.ts';
import { createDiscount, deleteDiscount, flushDiscount, getVisibleDiscount, updateDiscount } from './service.ts';

const READ: AuthRequirement = sellerAuth('discounts:read');
const WRITE: AuthRequirement = sellerAuth('discounts:write');
const idParams = z.object({ id: z.uuid() });
const listSchema = listOf(discountSchema);


export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/discounts/',
    summary: 'Create a discount',
    tags: ['discounts'],
    auth: WRITE,
    body: discountCreateSchema,
    status: 201,
    response: discountSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const d = await createDiscount(em, organizationId, body);
      await flushDiscount(em, body.code);
      return serializeDiscount(d);
    },
  }),
  route({
    method: 'get',
    path: '/v1/discounts/',
    summary: 'List discounts',
    tags: ['discounts'],
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
      const [items, total] = await em.findAndCount(Discount, where, {
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
  route({
    method: 'get',
    path: '/v1/discounts/:id',
    summary: 'Get a discount',
    tags: ['discounts'],
    auth: READ,
    params: idParams,
    response: discountSchema,
    async handler({ params, principal, em }) {
      return serializeDiscount(await getVisibleDiscount(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/discounts/:id',
    summary: 'Update a discount (type and duration never change; amounts are frozen once redeemed)',
    tags: ['discounts'],
    auth: WRITE,
    params: idParams,
    body: discountUpdateSchema,
    response: discountSchema,
    async handler({ params, body, principal, em }) {
      const d = await getVisibleDiscount(em, principal, params.id);
      await updateDiscount(em, d, body);
      await flushDiscount(em, body.code);
      return serializeDiscount(d);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/discounts/:id',
    summary: 'Delete a discount',
    tags: ['discounts'],
    auth: WRITE,
    params: idParams,
    status: 204,
    async handler({ params, principal, em }) {
      await em.transactional(async (tx) => {
        await deleteDiscount(tx, await getVisibleDiscount(tx, principal, params.id));
      });
    },
  }),
];
