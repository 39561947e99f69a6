/** /v1/custom-fields: create, list, read, update, delete. */
import { z } from 'zod/v4';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { containsPattern, inTransaction, type EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { PRODUCT_POPULATE, serializeProduct } from '../products/schemas.ts';
import { CUSTOM_FIELD_TYPES, CustomField } from './entities.ts';
import { customFieldCreateSchema, customFieldSchema, customFieldUpdateSchema, serializeCustomField } from './schemas.ts';
import { createCustomField, deleteCustomField, isSlugConflict, slugTaken, updateCustomField } from './service.ts';

const read = sellerAuth('custom_fields:read');
const write = sellerAuth('custom_fields:write');
const idParams = z.object({ id: z.uuid() });

async function findVisibleCustomField(em: EntityManager, principal: Principal, id: string): Promise<CustomField> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const field = await em.findOne(CustomField, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!field) throw ResourceNotFound('Custom field not found');
  return field;
}

/** A concurrent request took the slug between our check and the insert: same 422 as the check. */
async function withSlugConflict<T>(slug: string | null | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (slug && err instanceof UniqueConstraintViolationException && isSlugConflict(err)) throw slugTaken(slug);
    throw err;
  }
}

export const routes = [
  route({
    method: 'get',
    path: '/v1/custom-fields/',
    summary: 'List custom fields',
    tags: ['custom-fields'],
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
      const [items, total] = await em.findAndCount(CustomField, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeCustomField), total, query);
    },
  }),
  route({
    method: 'post',
    path: '/v1/custom-fields/',
    summary: 'Create a custom field',
    tags: ['custom-fields'],
    auth: write,
    body: customFieldCreateSchema,
    status: 201,
    response: customFieldSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      return withSlugConflict(body.slug, async () => {
        const { result } = await inTransaction(em, async (tx) => {
          const field = await createCustomField(tx, organizationId, body);
          await tx.flush();
          return serializeCustomField(field);
        });
        return result;
      });
    },
  }),
  route({
    method: 'get',
    path: '/v1/custom-fields/:id',
    summary: 'Get a custom field',
    tags: ['custom-fields'],
    auth: read,
    params: idParams,
    response: customFieldSchema,
    async handler({ params, principal, em }) {
      return serializeCustomField(await findVisibleCustomField(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/custom-fields/:id',
    summary: 'Update a custom field (its type cannot change)',
    tags: ['custom-fields'],
    auth: write,
    params: idParams,
    body: customFieldUpdateSchema,
    response: customFieldSchema,
    async handler({ params, body, principal, em }) {
      return withSlugConflict(body.slug, async () => {
        const { result } = await inTransaction(em, async (tx) => {
          const field = await findVisibleCustomField(tx, principal, params.id);
          await updateCustomField(tx, field, body);
          await tx.flush();
          return serializeCustomField(field);
        });
        return result;
      });
    },
  }),
  route({
    method: 'delete',
    path: '/v1/custom-fields/:id',
    summary: 'Delete a custom field; products asking it stop asking',
    tags: ['custom-fields'],
    auth: write,
    params: idParams,
    status: 204,
    async handler({ params, principal, em }) {
      await inTransaction(em, async (tx) => {
        const field = await findVisibleCustomField(tx, principal, params.id);
        const products = await deleteCustomField(tx, field);
        await tx.flush();
        for (const product of products) {
          await tx.populate(product, PRODUCT_POPULATE, { refresh: true });
          emitEvent(tx, product.organization.id, 'product.updated', serializeProduct(product));
        }
        await tx.flush();
      });
    },
  }),
];
