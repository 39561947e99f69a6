/** What the organization plugin's endpoints share: input shapes, the organization acted on, role checks. */
import { z } from 'zod/v4';
import { ORG_ERRORS } from '../errors.ts';
import type { LoadedSession } from '../sessions.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Member } from '../../modules/organizations/entities.ts';
import { findMember, hasPermission, isKnownRole } from '../../modules/organizations/membership.ts';

export const roleInput = z.union([z.string(), z.array(z.string())]);
export const metadataInput = z.record(z.string(), z.unknown());

/** The organization a request acts on: the one named, else the session's active one. */
export function targetOrganization(s: LoadedSession, requested: string | null | undefined): string | null {
  return requested || s.session.activeOrganizationId || null;
}

/** The organization a request names, or the session's active one; refused when there is neither. */
export function activeOrganization(s: LoadedSession, requested: string | null | undefined): string {
  const id = targetOrganization(s, requested);
  if (!id) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
  return id;
}

export function checkRoles(role: string) {
  if (!isKnownRole(role)) throw ORG_ERRORS.ROLE_NOT_FOUND();
}

/**
 * The user's membership of the organization, refused with `notMember()` when there is none and, with
 * `permission`, with `denied()` when their role lacks it (`denied` defaults to `notMember`).
 */
export async function requireMember(
  em: EntityManager,
  organizationId: string,
  userId: string,
  notMember: () => Error,
  permission?: Record<string, readonly string[]>,
  denied: () => Error = notMember,
): Promise<Member> {
  const member = await findMember(em, organizationId, userId);
  if (!member) throw notMember();
  if (permission && !hasPermission(member.role, permission)) throw denied();
  return member;
}
