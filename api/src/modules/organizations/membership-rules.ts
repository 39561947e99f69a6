/**
 * Membership rules that read or change more than one row: how many owners an organization has, and
 * clearing the active organization of sessions when a membership ends.
 */
import type { EntityManager } from '../../kit/db.ts';
import { Session } from '../../auth/entities.ts';
import { Member, Organization } from './entities.ts';
import { CREATOR_ROLE, hasRole, isUuid } from './membership.ts';

export async function loadOrganization(em: EntityManager, id: string): Promise<Organization | null> {
  return isUuid(id) ? em.findOne(Organization, { id }) : null;
}

/** Clears the active organization of a user's sessions that point at it (removal, leaving, deletion). */
export async function clearActiveFor(em: EntityManager, organizationId: string, userId?: string) {
  await em.nativeUpdate(
    Session,
    { activeOrganizationId: organizationId, ...(userId ? { user: userId } : {}) },
    { activeOrganizationId: null },
  );
}

export async function ownerCount(em: EntityManager, organizationId: string): Promise<number> {
  const members = await em.find(Member, { organization: organizationId }, { fields: ['role'] });
  return members.filter((m) => hasRole(m.role, CREATOR_ROLE)).length;
}
