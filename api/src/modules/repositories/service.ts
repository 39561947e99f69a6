/** Repositories as the seller reads and edits them (profile settings only), on the caller's transaction. */
import type { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { Repository } from './entities.ts';
import { serializeRepository, type repositoryUpdateSchema } from './schemas.ts';

/** A repository of an organization the principal can see; 404 otherwise. */
export async function getVisibleRepository(em: EntityManager, principal: Principal, id: string): Promise<Repository> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const r = await em.findOne(
    Repository,
    { id, organization: { $in: orgIds } },
    { populate: ['externalOrganization', 'organization'] },
  );
  if (!r) throw ResourceNotFound('Repository not found');
  return r;
}

/** Applies the profile settings a PATCH names (`set_*` flags say whether a nullable one is meant). */
export async function updateRepositoryProfile(
  tx: EntityManager,
  principal: Principal,
  id: string,
  body: z.output<typeof repositoryUpdateSchema>,
) {
  const r = await getVisibleRepository(tx, principal, id);
  const u = body.profile_settings;
  if (u) {
    const next = { ...r.profileSettings };
    if (u.set_description) next.description = u.description || null;
    if (u.set_cover_image_url) next.cover_image_url = u.cover_image_url ?? null;
    if (u.featured_organizations != null) next.featured_organizations = u.featured_organizations;
    if (u.highlighted_subscription_tiers != null) next.highlighted_subscription_tiers = u.highlighted_subscription_tiers;
    if (u.links != null) next.links = u.links;
    r.profileSettings = next;
    await tx.flush();
  }
  return serializeRepository(r);
}
