/** /v1/custom-fields: create, list, read, update, delete. */
import { z } from 'zod/v4';
import { containsPattern, findAndCountInOneSnapshot } from '../../kit/db.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, deleteRoute, getByIdRoute, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { CUSTOM_FIELD_TYPES, CustomField } from './entities.ts';
import { customFieldCreateSchema, customFieldSchema, customFieldUpdateSchema, serializeCustomField } from './schemas.ts';
import { createCustomField, deleteCustomField, findVisibleCustomField, updateCustomField } from './service.ts';

const read = sellerAuth('custom_fields:read');
const write = sellerAuth('custom_fields:write');
const tags = ['custom-fields'];

export const routes = [
  route({
    method: 'get',
    path: '/v1/custom-fields/',
    summary: 'List custom fields',
    tags,
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      query: z.string().optional(),
      type: queryList(z.enum(CUSTOM_FIELD_TYPES)).optional(),
      sorting: sortingQuery(['created_at', 'slug', 'name', 'type'], ['slug']),
    }),
    response: listOf(customFieldSchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds }, deletedAt: null };
      if (query.type) where.type = { $in: query.type };
      if (query.query) {
        const like = containsPattern(query.query);
        where.$or = [{ name: { $ilike: like } }, { slug: { $ilike: like } }];
      }
      const [items, total] = await findAndCountInOneSnapshot(em, CustomField, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeCustomField), total, query);
    },
  }),
  createRoute({
    path: '/v1/custom-fields/',
    summary: 'Create a custom field',
    tags,
    auth: write,
    body: customFieldCreateSchema,
    response: customFieldSchema,
    create: (tx, { body, principal }) => createCustomField(tx, principal, body),
  }),
  getByIdRoute({
    path: '/v1/custom-fields/:id',
    summary: 'Get a custom field',
    tags,
    auth: read,
    response: customFieldSchema,
    read: async ({ params, principal, em }) => serializeCustomField(await findVisibleCustomField(em, principal, params.id)),
  }),
  updateRoute({
    path: '/v1/custom-fields/:id',
    summary: 'Update a custom field (its type cannot change)',
    tags,
    auth: write,
    body: customFieldUpdateSchema,
    response: customFieldSchema,
    update: (tx, { params, body, principal }) => updateCustomField(tx, principal, params.id, body),
  }),
  deleteRoute({
    path: '/v1/custom-fields/:id',
    summary: 'Delete a custom field; products asking it stop asking',
    tags,
    auth: write,
    remove: (tx, { params, principal }) => deleteCustomField(tx, principal, params.id),
  }),
];
