/** An organization's tax rate per country, on the caller's transaction. */
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { TaxRate } from './entities.ts';

/** Sets the rate of a country that has none yet (422 on `body.country` otherwise). */
export async function setTaxRate(
  tx: EntityManager,
  principal: Principal,
  input: { organization_id?: string | null; country: string; basis_points: number },
): Promise<TaxRate> {
  const organizationId = await resolveWriteOrganization(tx, principal, input.organization_id);
  const existing = await tx.findOne(TaxRate, { organization: organizationId, country: input.country });
  if (existing) {
    throw fieldError(['body', 'country'], 'A tax rate for this country already exists.', 'value_error', input.country);
  }
  const t = tx.create(TaxRate, {
    organization: tx.getReference(Organization, organizationId),
    country: input.country,
    basisPoints: input.basis_points,
  });
  await tx.flush();
  return t;
}

export async function deleteTaxRate(tx: EntityManager, principal: Principal, id: string): Promise<void> {
  const orgIds = await visibleOrganizationIds(tx, principal);
  const t = await tx.findOne(TaxRate, { id, organization: { $in: orgIds } });
  if (!t) throw ResourceNotFound('Tax rate not found');
  tx.remove(t);
  await tx.flush();
}
