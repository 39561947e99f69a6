/**
 * What the product routes do in their one transaction: create, update and replace benefits, each
 * flushing and emitting its event (`product.created`, `product.updated`) and recording the workflow
 * it starts after commit.
 */
import { randomUUID } from 'node:crypto';
import { productBenefitsWorkflowId, productCreatedWorkflowId } from '@emporia/workflows/ids';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import type { AfterCommit } from '../../kit/route-helpers.ts';
import { productBenefitsRun, productCreatedRun } from '../../kit/run-metadata.ts';
import { startWorkflow } from '../../kit/workflow-starts.ts';
import { PRODUCT_BENEFITS_WORKFLOW, type ProductBenefitsChange } from '../benefits/product-sync.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Product } from './entities.ts';
import { emitProductsUpdated } from './events.ts';
import { PRODUCT_POPULATE, serializeProduct, type ProductCreate, type ProductRead, type ProductUpdate } from './schemas.ts';
import { createProduct, updateProduct, updateProductBenefits } from './service.ts';

/** A product the principal can see, with everything its read model needs; 404 otherwise. */
export async function findVisibleProduct(em: EntityManager, principal: Principal, id: string): Promise<Product> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const product = await em.findOne(Product, { id, organization: { $in: orgIds } }, { populate: PRODUCT_POPULATE });
  if (!product) throw ResourceNotFound('Product not found');
  return product;
}

/**
 * Creates the product, emits `product.created` and announces it to the organization's members: the
 * start is recorded with the product and made once the row is committed (the worker's sweeper makes
 * it if this process dies first).
 */
export async function addProduct(tx: EntityManager, afterCommit: AfterCommit, deps: Deps, principal: Principal, input: ProductCreate): Promise<ProductRead> {
  const organizationId = await resolveWriteOrganization(tx, principal, input.organization_id);
  const p = await createProduct(tx, organizationId, input);
  await tx.flush();
  await tx.populate(p, PRODUCT_POPULATE, { refresh: true });
  const data = serializeProduct(p);
  emitEvent(tx, organizationId, 'product.created', data);
  startWorkflow(tx, afterCommit, deps, {
    workflowType: 'productCreatedWorkflow',
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    workflowId: productCreatedWorkflowId(p.id),
    args: [{ productId: p.id }],
    metadata: productCreatedRun({ productId: p.id, organizationId, productName: p.name }),
  });
  await tx.flush();
  return data;
}

/** Applies a PATCH and emits `product.updated`. */
export async function editProduct(tx: EntityManager, principal: Principal, id: string, input: ProductUpdate): Promise<ProductRead> {
  const product = await findVisibleProduct(tx, principal, id);
  await updateProduct(tx, product, input);
  const [data] = await emitProductsUpdated(tx, [product]);
  return data!;
}

/**
 * Replaces the product's benefits and emits `product.updated`. Customers who own the product get the
 * added benefits and lose the removed ones in the background: one workflow pages through them
 * (recorded now, started after commit).
 */
export async function replaceProductBenefits(
  tx: EntityManager,
  afterCommit: AfterCommit,
  deps: Deps,
  principal: Principal,
  id: string,
  benefitIds: string[],
): Promise<ProductRead> {
  const product = await findVisibleProduct(tx, principal, id);
  const { added, removed } = await updateProductBenefits(tx, product, benefitIds);
  if (added.length || removed.length) {
    const change: ProductBenefitsChange = { productId: product.id, added: added.map((b) => b.id), removed: removed.map((b) => b.id) };
    startWorkflow(tx, afterCommit, deps, {
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
  const [data] = await emitProductsUpdated(tx, [product]);
  return data!;
}
