/**
 * Organization access tokens (`polar_oat_…`): the bearer resolver, and creation, scope changes and
 * revocation by the organization's owners and admins, on the caller's transaction. A token whose
 * scopes changed or that was revoked is looked up again on its next request (after the commit).
 */
import type { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { forgetCachedPrincipals, registerBearerResolver, type Principal } from '../../kit/principals.ts';
import type { AfterCommit } from '../../kit/route-helpers.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../kit/scopes.ts';
import { randomToken, sha256Hex } from '../../kit/crypto.ts';
import { Member, Organization, OrganizationAccessToken } from './entities.ts';
import { hasPermission } from './membership.ts';
import { serializeAccessToken, type accessTokenCreateSchema, type accessTokenUpdateSchema } from './schemas.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from './scope.ts';
import { isOrganizationAdmin } from './service.ts';

export const ORGANIZATION_TOKEN_PREFIX = 'polar_oat_';

registerBearerResolver(ORGANIZATION_TOKEN_PREFIX, async (em, token) => {
  const t = await em.findOne(OrganizationAccessToken, { tokenHash: sha256Hex(token), revokedAt: null });
  if (!t || (t.expiresAt && t.expiresAt.getTime() <= Date.now())) return null;
  // Record use at most once a minute to keep reads cheap.
  if (!t.lastUsedAt || Date.now() - t.lastUsedAt.getTime() > 60_000) {
    await em.nativeUpdate(OrganizationAccessToken, { id: t.id }, { lastUsedAt: new Date() });
  }
  return { kind: 'organization', organizationId: t.organization.id, tokenId: t.id, scopes: new Set(t.scopes), expiresAt: t.expiresAt ?? null };
}, { cacheMs: 5_000 });

const forgetToken = (tokenId: string) => forgetCachedPrincipals((p) => p.kind === 'organization' && p.tokenId === tokenId);

function checkScopes(scopes: string[]) {
  const unknown = scopes.filter((s) => !ORGANIZATION_TOKEN_SCOPES.includes(s));
  if (unknown.length) throw fieldError(['body', 'scopes'], `Unknown scope: ${unknown.join(', ')}`, 'enum', unknown);
}

/** Organizations whose tokens a user manages: those where they are owner or admin. */
export async function administeredIds(em: EntityManager, userId: string): Promise<string[]> {
  const members = await em.find(Member, { user: userId }, { fields: ['organization', 'role'] });
  return members.filter((m) => hasPermission(m.role, { organization: ['update'] })).map((m) => m.organization.id);
}

/** A live token of an organization the user administers: 404 if not visible, 403 for a plain member. */
async function manageableToken(em: EntityManager, userId: string, id: string) {
  const t = await em.findOne(OrganizationAccessToken, { id, revokedAt: null });
  if (!t) throw ResourceNotFound('Organization access token not found');
  const visible = await visibleOrganizationIds(em, { kind: 'user', userId, sessionId: '', scopes: new Set() });
  if (!visible.includes(t.organization.id)) throw ResourceNotFound('Organization access token not found');
  if (!(await isOrganizationAdmin(em, userId, t.organization.id))) {
    throw NotPermitted('Only owners and admins of the organization can manage its access tokens');
  }
  return t;
}

/** A new token for an organization the user administers; the token itself is answered once. */
export async function createAccessToken(tx: EntityManager, principal: Principal & { kind: 'user' }, body: z.output<typeof accessTokenCreateSchema>) {
  const orgId = await resolveWriteOrganization(tx, principal, body.organization_id);
  if (!(await isOrganizationAdmin(tx, principal.userId, orgId))) {
    throw NotPermitted('Only owners and admins of the organization can create access tokens');
  }
  checkScopes(body.scopes);
  const token = randomToken(ORGANIZATION_TOKEN_PREFIX, 32);
  const t = tx.create(OrganizationAccessToken, {
    organization: tx.getReference(Organization, orgId),
    comment: body.comment,
    tokenHash: sha256Hex(token),
    scopes: [...new Set(body.scopes)],
    expiresAt: body.expires_in ? new Date(Date.now() + body.expires_in * 1000) : null,
  });
  await tx.flush();
  return { organization_access_token: serializeAccessToken(t), token };
}

/** Changes a token's comment or scopes. */
export async function updateAccessToken(
  tx: EntityManager,
  afterCommit: AfterCommit,
  userId: string,
  id: string,
  body: z.output<typeof accessTokenUpdateSchema>,
) {
  const t = await manageableToken(tx, userId, id);
  if (body.scopes) {
    checkScopes(body.scopes);
    t.scopes = [...new Set(body.scopes)];
  }
  if (body.comment !== undefined && body.comment !== null) t.comment = body.comment;
  await tx.flush();
  afterCommit(async () => forgetToken(t.id));
  return serializeAccessToken(t);
}

export async function revokeAccessToken(tx: EntityManager, afterCommit: AfterCommit, userId: string, id: string): Promise<void> {
  const t = await manageableToken(tx, userId, id);
  t.revokedAt = new Date();
  await tx.flush();
  afterCommit(async () => forgetToken(t.id));
}
