/** /v1/benefits: create, list, read, update, delete, and a benefit's grants. */
import { z } from 'zod/v4';
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
import { Benefit, BENEFIT_TYPES } from './entities.ts';
import { BenefitGrant, benefitGrantSchema, serializeBenefitGrant } from './grants.ts';
import { benefitCreateSchema, benefitSchema, benefitUpdateSchema, serializeBenefit } from './schemas.ts';
import { createBenefit, deleteBenefit, updateBenefit } from './service.ts';
import { queueBenefitRequestsDurably } from './lifecycle.ts';

const read = sellerAuth('benefits:read');
const write = sellerAuth('benefits:write');
const idParams = z.object({ id: z.uuid() });
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

/** A live benefit the principal can see; 404 otherwise. */
export async function findVisibleBenefit(em: EntityManager, principal: Principal, id: string): Promise<Benefit> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const benefit = await em.findOne(Benefit, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!benefit) throw ResourceNotFound('Benefit not found');
  return benefit;
}

export const routes = [
  route({
    method: 'post',
    path: '/v1/benefits/',
    summary: 'Create a benefit',
    tags: ['benefits'],
    auth: write,
    body: benefitCreateSchema,
    status: 201,
    response: benefitSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const { result } = await inTransaction(em, async (tx) => {
        const benefit = await createBenefit(tx, organizationId, body);
        await tx.flush();
        const data = serializeBenefit(benefit);
        emitEvent(tx, organizationId, 'benefit.created', data);
        await tx.flush();
        return data;
      });
      return result;
    },
  }),
  route({
    method: 'get',
    path: '/v1/benefits/',
    summary: 'List benefits',
    tags: ['benefits'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      type: queryList(z.enum(BENEFIT_TYPES)).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'description']),
    }),
    response: listOf(benefitSchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds }, deletedAt: null };
      if (query.type) where.type = { $in: query.type };
      if (query.query) where.description = { $ilike: containsPattern(query.query) };
      const [items, total] = await em.findAndCount(Benefit, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeBenefit), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/benefits/:id',
    summary: 'Get a benefit',
    tags: ['benefits'],
    auth: read,
    params: idParams,
    response: benefitSchema,
    async handler({ params, principal, em }) {
      return serializeBenefit(await findVisibleBenefit(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/benefits/:id',
    summary: 'Update a benefit (its type cannot change)',
    tags: ['benefits'],
    auth: write,
    params: idParams,
    body: benefitUpdateSchema,
    response: benefitSchema,
    async handler({ params, body, principal, em, deps }) {
      const { result, afterCommit } = await inTransaction(em, async (tx, afterCommit) => {
        const benefit = await findVisibleBenefit(tx, principal, params.id);
        const { requiresUpdate } = await updateBenefit(tx, benefit, body);
        await tx.flush();
        const data = serializeBenefit(benefit);
        emitEvent(tx, benefit.organization.id, 'benefit.updated', data);
        await tx.flush();
        // Granted grants follow the change (new limits, files, repository, role) in the background.
        if (requiresUpdate) queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'benefit-changed', benefitId: benefit.id, action: 'update' }, benefit.organization.id);
        return data;
      });
      await afterCommit();
      return result;
    },
  }),
  route({
    method: 'delete',
    path: '/v1/benefits/:id',
    summary: 'Delete a benefit; products holding it lose it',
    tags: ['benefits'],
    auth: write,
    params: idParams,
    status: 204,
    async handler({ params, principal, em, deps }) {
      const { afterCommit } = await inTransaction(em, async (tx, afterCommit) => {
        const benefit = await findVisibleBenefit(tx, principal, params.id);
        const products = await deleteBenefit(tx, benefit);
        // Its grants are revoked in the background (benefit-grant workflows).
        queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'benefit-changed', benefitId: benefit.id, action: 'revoke' }, benefit.organization.id);
        await tx.flush();
        for (const product of products) {
          await tx.populate(product, PRODUCT_POPULATE, { refresh: true });
          emitEvent(tx, product.organization.id, 'product.updated', serializeProduct(product));
        }
        await tx.flush();
      });
      await afterCommit();
    },
  }),
  route({
    method: 'get',
    path: '/v1/benefits/:id/grants',
    summary: "List a benefit's grants",
    tags: ['benefits'],
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
      const [items, total] = await em.findAndCount(BenefitGrant, where, {
        populate: ['customer', 'benefit'],
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeBenefitGrant), total, query);
    },
  }),
];
