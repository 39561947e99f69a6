/** /v1/products: create, list, read, update, and the product's benefits. */
import { z } from 'zod/v4';
import { paginationQuery, sortingQuery } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, getByIdRoute, idParams, listOf, sellerAuth, transact, updateRoute } from '../../kit/route-helpers.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { scopedOrganizationIds, visibleOrganizationIds } from '../organizations/scope.ts';
import { productBenefitsUpdateSchema, productCreateSchema, productSchema, productUpdateSchema } from './schemas.ts';
import { listProductsJson, productJson } from './read-sql.ts';
import { addProduct, editProduct, replaceProductBenefits } from './writes.ts';

const listSchema = listOf(productSchema);

const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
const read = sellerAuth('products:read');
const write = sellerAuth('products:write');
const tags = ['products'];

export const productRoutes = [
  createRoute({
    path: '/v1/products/',
    summary: 'Create a product with its prices, media and custom fields',
    tags,
    auth: write,
    body: productCreateSchema,
    response: productSchema,
    create: (tx, { body, principal, deps, afterCommit }) => addProduct(tx, afterCommit, deps, principal, body),
  }),
  route({
    method: 'get',
    path: '/v1/products/',
    summary: 'List products',
    tags,
    auth: read,
    query: z.object({
      ...paginationQuery,
      id: queryList(z.uuid()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      query: z.string().optional(),
      is_archived: boolQuery.optional(),
      is_recurring: boolQuery.optional(),
      benefit_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'name', 'price_amount_type', 'price_amount']),
    }),
    response: listSchema,
    async handler(ctx) {
      const { query, principal, sql } = ctx;
      const orgIds = await scopedOrganizationIds(() => ctx.em, principal, query.organization_id);
      return listProductsJson(
        sql,
        {
          organizationIds: orgIds,
          ids: query.id,
          query: query.query,
          isArchived: query.is_archived,
          isRecurring: query.is_recurring,
          benefitIds: query.benefit_id,
        },
        query.sorting,
        query,
      );
    },
  }),
  getByIdRoute({
    path: '/v1/products/:id',
    summary: 'Get a product',
    tags,
    auth: read,
    response: productSchema,
    read: async (ctx) => {
      const json = await productJson(ctx.sql, await visibleOrganizationIds(() => ctx.em, ctx.principal), ctx.params.id);
      if (!json) throw ResourceNotFound('Product not found');
      return json;
    },
  }),
  updateRoute({
    path: '/v1/products/:id',
    summary: 'Update a product: details, prices (kept by id, new ones created, dropped ones archived), media, custom fields',
    tags,
    auth: write,
    body: productUpdateSchema,
    response: productSchema,
    update: (tx, { params, body, principal }) => editProduct(tx, principal, params.id, body),
  }),
  route({
    method: 'post',
    path: '/v1/products/:id/benefits',
    summary: "Replace a product's benefits",
    tags,
    auth: write,
    params: idParams,
    body: productBenefitsUpdateSchema,
    response: productSchema,
    handler: ({ params, body, principal, em, deps }) =>
      transact(em, (tx, afterCommit) => replaceProductBenefits(tx, afterCommit, deps, principal, params.id, body.benefits)),
  }),
];
