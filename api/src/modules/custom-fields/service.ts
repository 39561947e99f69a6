/**
 * Custom field rules. Services never commit on their own: the caller's transaction does. A slug is
 * free among the organization's live fields (checked first; a concurrent taker is the same 422).
 */
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { flushUnique } from '../../kit/route-helpers.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { ProductCustomField } from '../products/entities.ts';
import { emitProductsUpdated } from '../products/events.ts';
import { CustomField, type CustomFieldProperties } from './entities.ts';
import {
  cleanCustomFieldProperties,
  serializeCustomField,
  type CustomFieldCreate,
  type CustomFieldRead,
  type CustomFieldUpdate,
} from './schemas.ts';

const slugTaken = (slug: string) =>
  fieldError(['body', 'slug'], 'A custom field with this slug already exists.', 'value_error', slug);

async function assertSlugFree(em: EntityManager, organizationId: string, slug: string, except?: string) {
  const existing = await em.findOne(CustomField, { organization: organizationId, slug, deletedAt: null }, { fields: ['id'] });
  if (existing && existing.id !== except) throw slugTaken(slug);
}

/** A live custom field the principal can see; 404 otherwise. */
export async function findVisibleCustomField(em: EntityManager, principal: Principal, id: string): Promise<CustomField> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const field = await em.findOne(CustomField, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!field) throw ResourceNotFound('Custom field not found');
  return field;
}

/** Flushes; a concurrent request that took the slug between the check and the insert is the same 422. */
function flushSlug(tx: EntityManager, slug: string | null | undefined): Promise<void> {
  if (!slug) return tx.flush();
  return flushUnique(tx, 'custom_fields_organization_slug_live_unique', () => slugTaken(slug));
}

export async function createCustomField(tx: EntityManager, principal: Principal, input: CustomFieldCreate): Promise<CustomFieldRead> {
  const organizationId = await resolveWriteOrganization(tx, principal, input.organization_id);
  await assertSlugFree(tx, organizationId, input.slug);
  const field = tx.create(CustomField, {
    organization: tx.getReference(Organization, organizationId),
    type: input.type,
    slug: input.slug,
    name: input.name,
    properties: cleanCustomFieldProperties(input.properties as CustomFieldProperties),
    metadata: input.metadata ?? {},
    deletedAt: null,
  });
  await flushSlug(tx, input.slug);
  return serializeCustomField(field);
}

/** Applies a PATCH: the body's `type` must be the field's; a new slug must be free; properties are replaced. */
export async function updateCustomField(tx: EntityManager, principal: Principal, id: string, input: CustomFieldUpdate): Promise<CustomFieldRead> {
  const field = await findVisibleCustomField(tx, principal, id);
  if (input.type !== field.type) {
    throw fieldError(['body', 'type'], "The type of a custom field can't be changed.", 'value_error', input.type);
  }
  if (input.slug != null && input.slug !== field.slug) {
    await assertSlugFree(tx, field.organization.id, input.slug, field.id);
    field.slug = input.slug;
  }
  if (input.name != null) field.name = input.name;
  if (input.metadata != null) field.metadata = input.metadata;
  if (input.properties != null) field.properties = cleanCustomFieldProperties(input.properties as CustomFieldProperties);
  await flushSlug(tx, input.slug);
  return serializeCustomField(field);
}

/**
 * Soft-deletes a field (answers already collected keep their slug) and detaches it from every
 * product; each of those emits `product.updated`.
 */
export async function deleteCustomField(tx: EntityManager, principal: Principal, id: string): Promise<void> {
  const field = await findVisibleCustomField(tx, principal, id);
  field.deletedAt = new Date();
  const links = await tx.find(ProductCustomField, { customField: field }, { populate: ['product'] });
  for (const link of links) tx.remove(link);
  await emitProductsUpdated(tx, links.map((l) => l.product));
}
