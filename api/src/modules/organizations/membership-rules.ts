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

export interface CreationPolicy {
  ORGANIZATION_CREATION: 'all' | 'none' | 'admins' | 'verified';
  ORGANIZATION_LIMIT?: number | undefined;
  ORGANIZATION_LIMIT_BY_ROLE: Record<string, number>;
  ADMIN_USER_IDS: string[];
}

/**
 * Whether a user may create another organization (SPEC section 6): creation may be off, limited to
 * admins (admin role or ADMIN_USER_IDS) or to verified emails, and capped by the number of organizations
 * the user already belongs to (a per-role cap, the highest of the user's roles, replaces the default).
 */
export async function organizationCreationDecision(
  em: EntityManager,
  policy: CreationPolicy,
  user: { id: string; role?: string | null; emailVerified: boolean },
): Promise<'allowed' | 'not-allowed' | 'limit-reached'> {
  const roles = (user.role || 'user').split(',').map((r) => r.trim());
  const admin = policy.ADMIN_USER_IDS.includes(user.id) || roles.includes('admin');
  const allowed =
    policy.ORGANIZATION_CREATION === 'all' ||
    (policy.ORGANIZATION_CREATION === 'admins' && admin) ||
    (policy.ORGANIZATION_CREATION === 'verified' && user.emailVerified);
  if (!allowed) return 'not-allowed';
  const byRole = roles.map((r) => policy.ORGANIZATION_LIMIT_BY_ROLE[r]).filter((n): n is number => n !== undefined);
  const limit = byRole.length ? Math.max(...byRole) : policy.ORGANIZATION_LIMIT;
  if (limit === undefined) return 'allowed';
  const count = await em.count(Member, { user: user.id });
  return count >= limit ? 'limit-reached' : 'allowed';
}
