/** /v1/organizations and /v1/organization-access-tokens. */
import { z } from 'zod/v4';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { registerBearerResolver } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../kit/scopes.ts';
import { randomToken, sha256Hex } from '../../kit/crypto.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { User } from '../../auth/entities.ts';
import { Member, Organization, OrganizationAccessToken } from './entities.ts';
import { hasPermission } from './membership.ts';
import { organizationCreationDecision } from './membership-rules.ts';
import {
  accessTokenCreateSchema,
  accessTokenSchema,
  accessTokenUpdateSchema,
  organizationCreateSchema,
  organizationSchema,
  organizationUpdateSchema,
  serializeAccessToken,
  serializeOrganization,
} from './schemas.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from './scope.ts';
import {
  administeredOrganization,
  applyOrganizationUpdate,
  createOrganizationWithOwner,
  emitOrganizationUpdated,
  isOrganizationAdmin,
} from './service.ts';

export const ORGANIZATION_TOKEN_PREFIX = 'polar_oat_';

registerBearerResolver(ORGANIZATION_TOKEN_PREFIX, async (em, token) => {
  const t = await em.findOne(OrganizationAccessToken, { tokenHash: sha256Hex(token), revokedAt: null });
  if (!t || (t.expiresAt && t.expiresAt.getTime() <= Date.now())) return null;
  // Record use at most once a minute to keep reads cheap.
  if (!t.lastUsedAt || Date.now() - t.lastUsedAt.getTime() > 60_000) {
    await em.nativeUpdate(OrganizationAccessToken, { id: t.id }, { lastUsedAt: new Date() });
  }
  return { kind: 'organization', organizationId: t.organization.id, tokenId: t.id, scopes: new Set(t.scopes) };
});

const idParams = z.object({ id: z.uuid() });

function checkScopes(scopes: string[]) {
  const unknown = scopes.filter((s) => !ORGANIZATION_TOKEN_SCOPES.includes(s));
  if (unknown.length) throw fieldError(['body', 'scopes'], `Unknown scope: ${unknown.join(', ')}`, 'enum', unknown);
}

/** Organizations whose tokens a user manages: those where they are owner or admin. */
async function administeredIds(em: Parameters<typeof visibleOrganizationIds>[0], userId: string): Promise<string[]> {
  const members = await em.find(Member, { user: userId }, { fields: ['organization', 'role'] });
  return members.filter((m) => hasPermission(m.role, { organization: ['update'] })).map((m) => m.organization.id);
}

/** A live token of an organization the user administers: 404 if not visible, 403 for a plain member. */
async function manageableToken(em: Parameters<typeof visibleOrganizationIds>[0], userId: string, id: string) {
  const t = await em.findOne(OrganizationAccessToken, { id, revokedAt: null });
  if (!t) throw ResourceNotFound('Organization access token not found');
  const visible = await visibleOrganizationIds(em, { kind: 'user', userId, sessionId: '', scopes: new Set() });
  if (!visible.includes(t.organization.id)) throw ResourceNotFound('Organization access token not found');
  if (!(await isOrganizationAdmin(em, userId, t.organization.id))) {
    throw NotPermitted('Only owners and admins of the organization can manage its access tokens');
  }
  return t;
}

export const organizationRoutes = [
  route({
    method: 'post',
    path: '/v1/organizations/',
    summary: 'Create an organization; the signed-in user becomes its owner',
    tags: ['organizations'],
    auth: { kinds: ['user'], scopes: ['organizations:write'] },
    body: organizationCreateSchema,
    status: 201,
    response: organizationSchema,
    async handler({ body, principal, em, deps }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      // The same creation policy as /api/auth/organization/create (ORGANIZATION_CREATION and limits).
      const decision = await organizationCreationDecision(em, deps.cfg, await em.findOneOrFail(User, principal.userId));
      if (decision === 'not-allowed') throw NotPermitted('You are not allowed to create a new organization');
      if (decision === 'limit-reached') throw NotPermitted('You have reached the maximum number of organizations');
      const slugTaken = () =>
        fieldError(['body', 'slug'], 'An organization with this slug already exists.', 'value_error', body.slug);
      if (await em.count(Organization, { slug: body.slug })) throw slugTaken();
      try {
        const { organization } = await createOrganizationWithOwner(em, em.getReference(User, principal.userId), {
          name: body.name,
          slug: body.slug,
          avatarUrl: body.avatar_url ?? null,
          email: body.email ?? null,
          website: body.website ?? null,
          socials: body.socials ?? [],
          details: body.details ?? null,
          featureSettings: body.feature_settings ?? {},
          subscriptionSettings: body.subscription_settings ?? {},
          metadata: body.metadata ?? {},
        });
        return serializeOrganization(organization);
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) throw slugTaken();
        throw err;
      }
    },
  }),
  route({
    method: 'get',
    path: '/v1/organizations/',
    summary: 'List organizations the caller can see',
    tags: ['organizations'],
    auth: sellerAuth('organizations:read'),
    query: z.object({
      ...paginationQuery,
      slug: z.string().optional(),
      sorting: sortingQuery(['created_at', 'slug', 'name']),
    }),
    response: listOf(organizationSchema),
    async handler({ query, principal, em }) {
      const ids = await visibleOrganizationIds(em, principal);
      const where = { id: { $in: ids }, ...(query.slug ? { slug: query.slug } : {}) };
      const [items, total] = await em.findAndCount(Organization, where, {
        orderBy: toOrderBy(query.sorting, { created_at: 'createdAt' }),
        ...pageOffset(query),
      });
      return paginated(items.map(serializeOrganization), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/organizations/:id',
    summary: 'Get an organization',
    tags: ['organizations'],
    auth: sellerAuth('organizations:read'),
    params: idParams,
    response: organizationSchema,
    async handler({ params, principal, em }) {
      const ids = await visibleOrganizationIds(em, principal);
      const org = ids.includes(params.id) ? await em.findOne(Organization, { id: params.id }) : null;
      if (!org) throw ResourceNotFound('Organization not found');
      return serializeOrganization(org);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/organizations/:id',
    summary: 'Update an organization (owners and admins)',
    tags: ['organizations'],
    auth: { kinds: ['user', 'organization'], scopes: ['organizations:write'] },
    params: idParams,
    body: organizationUpdateSchema,
    response: organizationSchema,
    async handler({ params, body, principal, em }) {
      const org = await administeredOrganization(em, principal, params.id);
      applyOrganizationUpdate(org, body);
      emitOrganizationUpdated(em, org);
      await em.flush();
      return serializeOrganization(org);
    },
  }),
  route({
    method: 'post',
    path: '/v1/organization-access-tokens/',
    summary: 'Create an organization access token; the token is shown once',
    tags: ['organization-access-tokens'],
    auth: { kinds: ['user'] },
    body: accessTokenCreateSchema,
    status: 201,
    response: z.object({ organization_access_token: accessTokenSchema, token: z.string() }),
    async handler({ body, principal, em }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      const orgId = await resolveWriteOrganization(em, principal, body.organization_id);
      if (!(await isOrganizationAdmin(em, principal.userId, orgId))) {
        throw NotPermitted('Only owners and admins of the organization can create access tokens');
      }
      checkScopes(body.scopes);
      const token = randomToken(ORGANIZATION_TOKEN_PREFIX, 32);
      const t = em.create(OrganizationAccessToken, {
        organization: em.getReference(Organization, orgId),
        comment: body.comment,
        tokenHash: sha256Hex(token),
        scopes: [...new Set(body.scopes)],
        expiresAt: body.expires_in ? new Date(Date.now() + body.expires_in * 1000) : null,
      });
      await em.flush();
      return { organization_access_token: serializeAccessToken(t), token };
    },
  }),
  route({
    method: 'get',
    path: '/v1/organization-access-tokens/',
    summary: 'List the live access tokens of the organizations the caller administers',
    tags: ['organization-access-tokens'],
    auth: { kinds: ['user'] },
    query: z.object({
      ...paginationQuery,
      organization_id: z.uuid().optional(),
      sorting: sortingQuery(['created_at', 'comment', 'last_used_at']),
    }),
    response: listOf(accessTokenSchema),
    async handler({ query, principal, em }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      let ids = await administeredIds(em, principal.userId);
      if (query.organization_id) ids = ids.filter((id) => id === query.organization_id);
      const [items, total] = await em.findAndCount(
        OrganizationAccessToken,
        { organization: { $in: ids }, revokedAt: null },
        {
          orderBy: toOrderBy(query.sorting, { created_at: 'createdAt', last_used_at: 'lastUsedAt' }),
          ...pageOffset(query),
        },
      );
      return paginated(items.map(serializeAccessToken), total, query);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/organization-access-tokens/:id',
    summary: 'Update the comment or scopes of an access token',
    tags: ['organization-access-tokens'],
    auth: { kinds: ['user'] },
    params: idParams,
    body: accessTokenUpdateSchema,
    response: accessTokenSchema,
    async handler({ params, body, principal, em }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      const t = await manageableToken(em, principal.userId, params.id);
      if (body.scopes) {
        checkScopes(body.scopes);
        t.scopes = [...new Set(body.scopes)];
      }
      if (body.comment !== undefined && body.comment !== null) t.comment = body.comment;
      await em.flush();
      return serializeAccessToken(t);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/organization-access-tokens/:id',
    summary: 'Revoke an access token',
    tags: ['organization-access-tokens'],
    auth: { kinds: ['user'] },
    params: idParams,
    status: 204,
    async handler({ params, principal, em }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      const t = await manageableToken(em, principal.userId, params.id);
      t.revokedAt = new Date();
      await em.flush();
    },
  }),
];
