/** /v1/products: create, list, read, update, and the product's benefits. */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { productBenefitsWorkflowId, productCreatedWorkflowId } from '@emporia/workflows/ids';
import { inTransaction, type EntityManager } from '../../kit/db.ts';
import { startWorkflow } from '../../kit/workflow-starts.ts';
import { productBenefitsRun, productCreatedRun } from '../../kit/run-metadata.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import type { Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { PRODUCT_BENEFITS_WORKFLOW, type ProductBenefitsChange } from '../benefits/product-sync.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Product } from './entities.ts';
import {
  PRODUCT_POPULATE,
  productBenefitsUpdateSchema,
  productCreateSchema,
  productSchema,
  productUpdateSchema,
  serializeProduct,
} from './schemas.ts';
import { createProduct, listProductIds, updateProduct, updateProductBenefits } from './service.ts';

const listSchema = listOf(productSchema);

const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');
const idParams = z.object({ id: z.uuid() });
const read = sellerAuth('products:read');
const write = sellerAuth('products:write');

/** A product the principal can see, with everything its read model needs; 404 otherwise. */
async function findVisibleProduct(em: EntityManager, principal: Principal, id: string): Promise<Product> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const product = await em.findOne(Product, { id, organization: { $in: orgIds } }, { populate: PRODUCT_POPULATE });
  if (!product) throw ResourceNotFound('Product not found');
  return product;
}

/** Flushes, reloads the product's relations and writes `product.updated` with the fresh read model. */
async function flushAndEmitUpdated(tx: EntityManager, product: Product) {
  await tx.flush();
  await tx.populate(product, PRODUCT_POPULATE, { refresh: true });
  const data = serializeProduct(product);
  emitEvent(tx, product.organization.id, 'product.updated', data);
  await tx.flush();
  return data;
}

export const productRoutes = [
  route({
    method: 'post',
    path: '/v1/products/',
    summary: 'Create a product with its prices, media and custom fields',
    tags: ['products'],
    auth: write,
    body: productCreateSchema,
    status: 201,
    response: productSchema,
    async handler({ body, principal, em, deps }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const { result, afterCommit } = await inTransaction(em, async (tx, after) => {
        const p = await createProduct(tx, organizationId, body);
        await tx.flush();
        await tx.populate(p, PRODUCT_POPULATE, { refresh: true });
        const data = serializeProduct(p);
        emitEvent(tx, organizationId, 'product.created', data);
        // Announce the product to the organization's members: the start is recorded with the product
        // and made once the row is committed (the worker's sweeper makes it if this process dies first).
        startWorkflow(tx, after, deps, {
          workflowType: 'productCreatedWorkflow',
          taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
          workflowId: productCreatedWorkflowId(p.id),
          args: [{ productId: p.id }],
          metadata: productCreatedRun({ productId: p.id, organizationId, productName: p.name }),
        });
        await tx.flush();
        return data;
      });
      await afterCommit();
      return result;
    },
  }),
  route({
    method: 'get',
    path: '/v1/products/',
    summary: 'List products',
    tags: ['products'],
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
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const { ids, total } = await listProductIds(
        em,
        {
          organizationIds: orgIds,
          ids: query.id,
          query: query.query,
          isArchived: query.is_archived,
          isRecurring: query.is_recurring,
          benefitIds: query.benefit_id,
        },
        query.sorting,
        pageOffset(query),
      );
      const products = ids.length ? await em.find(Product, { id: { $in: ids } }, { populate: PRODUCT_POPULATE }) : [];
      const byId = new Map(products.map((p) => [p.id, p]));
      return paginated(
        ids.map((id) => serializeProduct(byId.get(id)!)),
        total,
        query,
      );
    },
  }),
  route({
    method: 'get',
    path: '/v1/products/:id',
    summary: 'Get a product',
    tags: ['products'],
    auth: read,
    params: idParams,
    response: productSchema,
    async handler({ params, principal, em }) {
      return serializeProduct(await findVisibleProduct(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/products/:id',
    summary: 'Update a product: details, prices (kept by id, new ones created, dropped ones archived), media, custom fields',
    tags: ['products'],
    auth: write,
    params: idParams,
    body: productUpdateSchema,
    response: productSchema,
    async handler({ params, body, principal, em }) {
      const { result } = await inTransaction(em, async (tx) => {
        const product = await findVisibleProduct(tx, principal, params.id);
        await updateProduct(tx, product, body);
        return flushAndEmitUpdated(tx, product);
      });
      return result;
    },
  }),
  route({
    method: 'post',
    path: '/v1/products/:id/benefits',
    summary: "Replace a product's benefits",
    tags: ['products'],
    auth: write,
    params: idParams,
    body: productBenefitsUpdateSchema,
    response: productSchema,
    async handler({ params, body, principal, em, deps }) {
      const { result, afterCommit } = await inTransaction(em, async (tx, after) => {
        const product = await findVisibleProduct(tx, principal, params.id);
        const { added, removed } = await updateProductBenefits(tx, product, body.benefits);
        if (added.length || removed.length) {
          // Customers who own the product get the added benefits and lose the removed ones, in the
          // background: one workflow pages through them (recorded now, started after commit).
          const change: ProductBenefitsChange = { productId: product.id, added: added.map((b) => b.id), removed: removed.map((b) => b.id) };
          startWorkflow(tx, after, deps, {
            workflowType: PRODUCT_BENEFITS_WORKFLOW,
            taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
            workflowId: productBenefitsWorkflowId(product.id, randomUUID()),
            args: [change],
            metadata: productBenefitsRun({
              productId: product.id,
              organizationId: product.organization.id,
              productName: product.name,
              added: added.length,
              removed: removed.length,
            }),
          });
        }
        return flushAndEmitUpdated(tx, product);
      });
      await afterCommit();
      return result;
    },
  }),
];
