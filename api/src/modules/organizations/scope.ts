/** Which organizations a principal may see: every read is scoped through here. */
import type { EntityManager } from '../../kit/db.ts';
import type { Principal } from '../../kit/principals.ts';
import { fieldError } from '../../kit/errors.ts';
import { Member } from './entities.ts';

/** An EntityManager, or a function that returns one when a user's memberships must be read (no fork for a token). */
export type LazyEm = EntityManager | (() => EntityManager);

export async function visibleOrganizationIds(em: LazyEm, principal: Principal): Promise<string[]> {
  switch (principal.kind) {
    case 'organization':
      return [principal.organizationId];
    case 'customer':
      return [principal.organizationId];
    case 'user': {
      const members = await (typeof em === 'function' ? em() : em).find(Member, { user: principal.userId }, { fields: ['organization'] });
      return members.map((m) => m.organization.id);
    }
    case 'oauth2':
      if (principal.subject.kind === 'organization') return [principal.subject.organizationId];
      return visibleOrganizationIds(em, { kind: 'user', userId: principal.subject.userId, sessionId: '', scopes: principal.scopes });
    default:
      return [];
  }
}

/** The organizations a list reads: those the principal sees, narrowed to `requested` (`?organization_id=`) when given. */
export async function scopedOrganizationIds(em: LazyEm, principal: Principal, requested?: string[] | null): Promise<string[]> {
  const ids = await visibleOrganizationIds(em, principal);
  return requested ? ids.filter((id) => requested.includes(id)) : ids;
}

/**
 * The organization a write acts for. An organization token acts for its own organization and may not
 * name another; a user must name one they belong to. Problems are 422 on `body.organization_id`.
 */
export async function resolveWriteOrganization(
  em: EntityManager,
  principal: Principal,
  requested: string | null | undefined,
): Promise<string> {
  if (principal.kind === 'organization' || (principal.kind === 'oauth2' && principal.subject.kind === 'organization')) {
    const own = principal.kind === 'organization' ? principal.organizationId : (principal.subject as { organizationId: string }).organizationId;
    if (requested && requested !== own) {
      throw fieldError(['body', 'organization_id'], 'Setting organization_id is disallowed when using an organization token.');
    }
    return own;
  }
  if (!requested) throw fieldError(['body', 'organization_id'], 'Field required', 'missing');
  const ids = await visibleOrganizationIds(em, principal);
  if (!ids.includes(requested)) throw fieldError(['body', 'organization_id'], 'Organization not found.', 'value_error', requested);
  return requested;
}
