/** What the organization plugin's endpoints share: input shapes, the organization acted on, role checks. */
import { z } from 'zod/v4';
import { ORG_ERRORS } from '../errors.ts';
import type { LoadedSession } from '../sessions.ts';
import { isKnownRole } from '../../modules/organizations/membership.ts';

export const roleInput = z.union([z.string(), z.array(z.string())]);
export const metadataInput = z.record(z.string(), z.unknown());

/** The organization a request acts on: the one named, else the session's active one. */
export function targetOrganization(s: LoadedSession, requested: string | null | undefined): string | null {
  return requested || s.session.activeOrganizationId || null;
}

export function checkRoles(role: string) {
  if (!isKnownRole(role)) throw ORG_ERRORS.ROLE_NOT_FOUND();
}
