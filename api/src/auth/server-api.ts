/**
 * Server-only calls of the auth service: what Better Auth marks `SERVER_ONLY` (`auth.api.addMember`).
 * Its router never serves them over HTTP — `POST /api/auth/organization/add-member` is a 404 here as
 * there — so no browser or client can reach them; server code (scripts, workers, other modules) calls
 * them with an EntityManager and is trusted to have decided that the call is allowed.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import type { EntityManager } from '../kit/db.ts';
import { Member, Organization, Team } from '../modules/organizations/entities.ts';
import { MEMBERSHIP_LIMIT, baMember, findMember, isKnownRole, isUuid, parseRoles } from '../modules/organizations/membership.ts';
import { User } from './entities.ts';
import { AUTH_ERRORS, ORG_ERRORS } from './errors.ts';

const addMemberInput = z.object({
  userId: z.string().min(1),
  role: z.union([z.string(), z.array(z.string())]),
  organizationId: z.string().min(1),
  teamId: z.string().min(1).optional(),
});

export type AddMemberInput = z.input<typeof addMemberInput>;

/**
 * Adds a user to an organization with a role (and optionally a team), without an invitation. Errors are
 * Better Auth's: 400 VALIDATION_ERROR, Organization not found, Role not found, User not found, User is
 * already a member of this organization, Team not found; 403 Organization membership limit reached.
 * Flushes on the given EntityManager (in a caller's transaction, commits with it).
 */
export async function addMember(em: EntityManager, input: AddMemberInput): Promise<ReturnType<typeof baMember>> {
  const parsed = addMemberInput.safeParse(input);
  if (!parsed.success) throw AUTH_ERRORS.VALIDATION_BODY();
  const body = parsed.data;
  const role = parseRoles(body.role);
  if (!isKnownRole(role)) throw ORG_ERRORS.ROLE_NOT_FOUND();
  const organization = isUuid(body.organizationId) ? await em.findOne(Organization, { id: body.organizationId }) : null;
  if (!organization) throw ORG_ERRORS.ORGANIZATION_NOT_FOUND();
  const user = isUuid(body.userId) ? await em.findOne(User, { id: body.userId }) : null;
  if (!user) throw AUTH_ERRORS.USER_NOT_FOUND();
  if (await findMember(em, organization.id, user.id)) throw ORG_ERRORS.USER_IS_ALREADY_A_MEMBER();
  let team: Team | null = null;
  if (body.teamId) {
    team = isUuid(body.teamId) ? await em.findOne(Team, { id: body.teamId, organization: organization.id }) : null;
    if (!team) throw ORG_ERRORS.TEAM_NOT_FOUND();
  }
  if ((await em.count(Member, { organization: organization.id })) >= MEMBERSHIP_LIMIT) throw ORG_ERRORS.MEMBERSHIP_LIMIT_REACHED();
  const member = em.create(Member, { organization, user, role, team });
  try {
    await em.flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw ORG_ERRORS.USER_IS_ALREADY_A_MEMBER();
    throw err;
  }
  return baMember(member, true);
}
