/**
 * Benefit rules. Services never commit on their own: the caller's transaction does. Each write
 * flushes and emits its webhook event (`benefit.created`, `benefit.updated`, `product.updated`).
 */
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import type { AfterCommit } from '../../kit/route-helpers.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { ProductBenefit } from '../products/entities.ts';
import { emitProductsUpdated } from '../products/events.ts';
import { flushAndEmit } from '../webhooks/outbox.ts';
import { Benefit } from './entities.ts';
import { queueBenefitRequestsDurably } from './lifecycle.ts';
import { serializeBenefit, type BenefitCreate, type BenefitRead, type BenefitUpdate } from './schemas.ts';
import { strategyFor } from './types/index.ts';

/** A live benefit the principal can see; 404 otherwise. */
export async function findVisibleBenefit(em: EntityManager, principal: Principal, id: string): Promise<Benefit> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const benefit = await em.findOne(Benefit, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!benefit) throw ResourceNotFound('Benefit not found');
  return benefit;
}

/** Creates a benefit in the organization the body names (or the caller's) and emits `benefit.created`. */
export async function createBenefit(tx: EntityManager, principal: Principal, input: BenefitCreate): Promise<BenefitRead> {
  const organizationId = await resolveWriteOrganization(tx, principal, input.organization_id);
  const properties = await strategyFor(input.type).validateProperties({ em: tx, organizationId }, input.properties);
  const benefit = tx.create(Benefit, {
    organization: tx.getReference(Organization, organizationId),
    type: input.type,
    description: input.description,
    isTaxApplicable: input.type === 'custom' ? (input.is_tax_applicable ?? false) : false,
    selectable: true,
    deletable: true,
    properties,
    deletedAt: null,
  });
  return flushAndEmit(tx, organizationId, 'benefit.created', () => serializeBenefit(benefit));
}

/**
 * Applies a PATCH and emits `benefit.updated`. When the change reaches existing grants (new limits,
 * files, repository, role), they follow it in the background (benefit-requests workflow).
 */
export async function updateBenefit(
  tx: EntityManager,
  afterCommit: AfterCommit,
  deps: Deps,
  principal: Principal,
  id: string,
  input: BenefitUpdate,
): Promise<BenefitRead> {
  const benefit = await findVisibleBenefit(tx, principal, id);
  const { requiresUpdate } = await applyBenefitUpdate(tx, benefit, input);
  const data = await flushAndEmit(tx, benefit.organization.id, 'benefit.updated', () => serializeBenefit(benefit));
  if (requiresUpdate) {
    queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'benefit-changed', benefitId: benefit.id, action: 'update' }, benefit.organization.id);
  }
  return data;
}

/**
 * The body's `type` must be the benefit's; `properties`, when given, replace the stored ones
 * (validated like on creation). Returns whether existing grants need refreshing.
 */
async function applyBenefitUpdate(em: EntityManager, benefit: Benefit, input: BenefitUpdate): Promise<{ requiresUpdate: boolean }> {
  if (input.type !== benefit.type) {
    throw fieldError(['body', 'type'], 'The type of a benefit cannot be changed.', 'value_error', input.type);
  }
  let requiresUpdate = false;
  if (input.properties != null) {
    const strategy = strategyFor(benefit.type);
    const previous = benefit.properties;
    const next = await strategy.validateProperties(
      { em, organizationId: benefit.organization.id, previous },
      input.properties,
    );
    requiresUpdate = strategy.requiresUpdate(previous, next);
    benefit.properties = next;
  }
  if (input.description != null) benefit.description = input.description;
  if (input.type === 'custom' && input.is_tax_applicable != null) benefit.isTaxApplicable = input.is_tax_applicable;
  return { requiresUpdate };
}

/**
 * Soft-deletes a benefit and detaches it from every product (each emits `product.updated`). Benefits
 * marked non-deletable answer 403. Its grants are revoked in the background (benefit-grant workflows).
 */
export async function deleteBenefit(tx: EntityManager, afterCommit: AfterCommit, deps: Deps, principal: Principal, id: string): Promise<void> {
  const benefit = await findVisibleBenefit(tx, principal, id);
  if (!benefit.deletable) throw NotPermitted('This benefit cannot be deleted.');
  benefit.deletedAt = new Date();
  const links = await tx.find(ProductBenefit, { benefit }, { populate: ['product'] });
  for (const link of links) tx.remove(link);
  queueBenefitRequestsDurably(tx, afterCommit, deps, { kind: 'benefit-changed', benefitId: benefit.id, action: 'revoke' }, benefit.organization.id);
  await emitProductsUpdated(tx, links.map((l) => l.product));
}
