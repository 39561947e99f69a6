/** Custom field rules. Services never commit on their own: the caller's transaction does. */
import type { EntityManager } from '../../kit/db.ts';
import { fieldError } from '../../kit/errors.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductCustomField } from '../products/entities.ts';
import { CustomField, type CustomFieldProperties } from './entities.ts';
import { cleanCustomFieldProperties, type CustomFieldCreate, type CustomFieldUpdate } from './schemas.ts';

const slugTaken = (slug: string) =>
  fieldError(['body', 'slug'], 'A custom field with this slug already exists.', 'value_error', slug);

async function assertSlugFree(em: EntityManager, organizationId: string, slug: string, except?: string) {
  const existing = await em.findOne(CustomField, { organization: organizationId, slug, deletedAt: null }, { fields: ['id'] });
  if (existing && existing.id !== except) throw slugTaken(slug);
}

export async function createCustomField(em: EntityManager, organizationId: string, input: CustomFieldCreate): Promise<CustomField> {
  await assertSlugFree(em, organizationId, input.slug);
  return em.create(CustomField, {
    organization: em.getReference(Organization, organizationId),
    type: input.type,
    slug: input.slug,
    name: input.name,
    properties: cleanCustomFieldProperties(input.properties as CustomFieldProperties),
    metadata: input.metadata ?? {},
    deletedAt: null,
  });
}

/** Applies a PATCH: the body's `type` must be the field's; a new slug must be free; properties are replaced. */
export async function updateCustomField(em: EntityManager, field: CustomField, input: CustomFieldUpdate): Promise<void> {
  if (input.type !== field.type) {
    throw fieldError(['body', 'type'], "The type of a custom field can't be changed.", 'value_error', input.type);
  }
  if (input.slug != null && input.slug !== field.slug) {
    await assertSlugFree(em, field.organization.id, input.slug, field.id);
    field.slug = input.slug;
  }
  if (input.name != null) field.name = input.name;
  if (input.metadata != null) field.metadata = input.metadata;
  if (input.properties != null) field.properties = cleanCustomFieldProperties(input.properties as CustomFieldProperties);
}

/**
 * Soft-deletes a field (answers already collected keep their slug) and detaches it from every
 * product. Returns the products it was attached to.
 */
export async function deleteCustomField(em: EntityManager, field: CustomField): Promise<Product[]> {
  field.deletedAt = new Date();
  const links = await em.find(ProductCustomField, { customField: field }, { populate: ['product'] });
  for (const link of links) em.remove(link);
  return links.map((l) => l.product);
}

/** Whether a unique-index violation is the live-slug index (a concurrent create or rename). */
export function isSlugConflict(err: unknown): boolean {
  return String((err as { message?: string })?.message ?? '').includes('custom_fields_organization_slug_live_unique');
}
export { slugTaken };
