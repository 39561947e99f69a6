/** /v1/benefits: create, list, read, update, delete, and a benefit's grants. */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, deleteRoute, getByIdRoute, idParams, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { scopedOrganizationIds, visibleOrganizationIds } from '../organizations/scope.ts';
import { benefitJson, listBenefitsJson } from './read-sql.ts';
import { BENEFIT_TYPES } from './entities.ts';
import { BenefitGrant, benefitGrantSchema, serializeBenefitGrant } from './grants.ts';
import { benefitCreateSchema, benefitSchema, benefitUpdateSchema } from './schemas.ts';
import { createBenefit, deleteBenefit, findVisibleBenefit, updateBenefit } from './service.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const read = sellerAuth('benefits:read');
const write = sellerAuth('benefits:write');
const tags = ['benefits'];
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const routes = [
  createRoute({
    path: '/v1/benefits/',
    summary: 'Create a benefit',
    tags,
    auth: write,
    body: benefitCreateSchema,
    response: benefitSchema,
    create: (tx, { body, principal }) => createBenefit(tx, principal, body),
  }),
  route({
    method: 'get',
    path: '/v1/benefits/',
    summary: 'List benefits',
    tags,
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      type: queryList(z.enum(BENEFIT_TYPES)).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'description']),
    }),
    response: listOf(benefitSchema),
    async handler(ctx) {
      const { query, principal, sql } = ctx;
      const orgIds = await scopedOrganizationIds(() => ctx.em, principal, query.organization_id);
      return listBenefitsJson(sql, { organizationIds: orgIds, types: query.type, query: query.query }, query.sorting, query);
    },
  }),
  getByIdRoute({
    path: '/v1/benefits/:id',
    summary: 'Get a benefit',
    tags,
    auth: read,
    response: benefitSchema,
    read: async (ctx) => {
      const json = await benefitJson(ctx.sql, await visibleOrganizationIds(() => ctx.em, ctx.principal), ctx.params.id);
      if (!json) throw ResourceNotFound('Benefit not found');
      return json;
    },
  }),
  updateRoute({
    path: '/v1/benefits/:id',
    summary: 'Update a benefit (its type cannot change)',
    tags,
    auth: write,
    body: benefitUpdateSchema,
    response: benefitSchema,
    update: (tx, { params, body, principal, deps, afterCommit }) => updateBenefit(tx, afterCommit, deps, principal, params.id, body),
  }),
  deleteRoute({
    path: '/v1/benefits/:id',
    summary: 'Delete a benefit; products holding it lose it',
    tags,
    auth: write,
    remove: (tx, { params, principal, deps, afterCommit }) => deleteBenefit(tx, afterCommit, deps, principal, params.id),
  }),
  route({
    method: 'get',
    path: '/v1/benefits/:id/grants',
    summary: "List a benefit's grants",
    tags,
    auth: read,
    params: idParams,
    query: z.object({
      ...paginationQuery,
      is_granted: boolQuery.optional(),
      customer_id: queryList(z.uuid()).optional(),
    }),
    response: listOf(benefitGrantSchema),
    async handler({ params, query, principal, em }) {
      const benefit = await findVisibleBenefit(em, principal, params.id);
      const where: Record<string, unknown> = { benefit };
      if (query.is_granted !== undefined) where.grantedAt = query.is_granted ? { $ne: null } : null;
      if (query.customer_id) where.customer = { $in: query.customer_id };
      const [items, total] = await findAndCountInOneSnapshot(em, BenefitGrant, where, {
        populate: ['customer', 'benefit'],
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeBenefitGrant), total, query);
    },
  }),
];
