/** /v1/products: create, list and read. */
import { z } from 'zod/v4';
import { productCreatedWorkflowId } from '@emporia/workflows/ids';
import { inTransaction } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { Product } from './entities.ts';
import { productCreateSchema, productSchema, serializeProduct } from './schemas.ts';
import { createProduct } from './service.ts';
import { emitEvent } from '../webhooks/outbox.ts';

const listSchema = z.object({
  items: z.array(productSchema),
  pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
});

const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

export const productRoutes = [
  route({
    method: 'post',
    path: '/v1/products/',
    summary: 'Create a product with its prices',
    tags: ['products'],
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['products:write'] },
    body: productCreateSchema,
    status: 201,
    response: productSchema,
    async handler({ body, principal, em, deps }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const { result: product, afterCommit } = await inTransaction(em, async (tx, after) => {
        const p = createProduct(tx, organizationId, body);
        await tx.flush();
        emitEvent(tx, organizationId, 'product.created', serializeProduct(p));
        await tx.flush();
        // Announce the product to the organization's members, durably, once the row is committed.
        after(() =>
          deps.temporal.workflow.start('productCreatedWorkflow', {
            taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
            workflowId: productCreatedWorkflowId(p.id),
            args: [{ productId: p.id }],
          }),
        );
        return p;
      });
      await afterCommit();
      await em.populate(product, ['prices']);
      return serializeProduct(product);
    },
  }),
  route({
    method: 'get',
    path: '/v1/products/',
    summary: 'List products',
    tags: ['products'],
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['products:read'] },
    query: z.object({
      ...paginationQuery,
      id: queryList(z.uuid()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      query: z.string().optional(),
      is_archived: boolQuery.optional(),
      is_recurring: boolQuery.optional(),
      sorting: sortingQuery(['created_at', 'name']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      let orgIds = await visibleOrganizationIds(em, principal);
      if (query.organization_id) orgIds = orgIds.filter((id) => query.organization_id!.includes(id));
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.id) where.id = { $in: query.id };
      if (query.query) where.name = { $ilike: `%${query.query.replace(/[\\%_]/g, '\\$&')}%` };
      if (query.is_archived !== undefined) where.isArchived = query.is_archived;
      if (query.is_recurring !== undefined) where.recurringInterval = query.is_recurring ? { $ne: null } : null;
      const [items, total] = await em.findAndCount(Product, where, {
        populate: ['prices'],
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeProduct), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/products/:id',
    summary: 'Get a product',
    tags: ['products'],
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['products:read'] },
    params: z.object({ id: z.uuid() }),
    response: productSchema,
    async handler({ params, principal, em }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const product = await em.findOne(Product, { id: params.id, organization: { $in: orgIds } }, { populate: ['prices'] });
      if (!product) throw ResourceNotFound('Product not found');
      return serializeProduct(product);
    },
  }),
];
