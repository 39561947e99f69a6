/** Benefit rules. Services never commit on their own: the caller's transaction does. */
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, fieldError } from '../../kit/errors.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductBenefit } from '../products/entities.ts';
import { Benefit } from './entities.ts';
import type { BenefitCreate, BenefitUpdate } from './schemas.ts';
import { strategyFor } from './types/index.ts';

export async function createBenefit(em: EntityManager, organizationId: string, input: BenefitCreate): Promise<Benefit> {
  const properties = await strategyFor(input.type).validateProperties({ em, organizationId }, input.properties);
  return em.create(Benefit, {
    organization: em.getReference(Organization, organizationId),
    type: input.type,
    description: input.description,
    isTaxApplicable: input.type === 'custom' ? (input.is_tax_applicable ?? false) : false,
    selectable: true,
    deletable: true,
    properties,
    deletedAt: null,
  });
}

/**
 * Applies a PATCH. The body's `type` must be the benefit's; `properties`, when given, replace the
 * stored ones (validated like on creation). Returns whether existing grants need refreshing.
 */
export async function updateBenefit(em: EntityManager, benefit: Benefit, input: BenefitUpdate): Promise<{ requiresUpdate: boolean }> {
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
 * Soft-deletes a benefit and detaches it from every product. Benefits marked non-deletable answer
 * 403. Returns the products that lost it (the route then revokes its grants through the grant workflows).
 */
export async function deleteBenefit(em: EntityManager, benefit: Benefit): Promise<Product[]> {
  if (!benefit.deletable) throw NotPermitted('This benefit cannot be deleted.');
  benefit.deletedAt = new Date();
  const links = await em.find(ProductBenefit, { benefit }, { populate: ['product'] });
  for (const link of links) em.remove(link);
  return links.map((l) => l.product);
}
