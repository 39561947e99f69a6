/** /v1/organizations and /v1/organization-access-tokens. */
import { z } from 'zod/v4';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { registerBearerResolver } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../kit/scopes.ts';
import { randomToken, sha256Hex } from '../../kit/crypto.ts';
import { User } from '../../auth/entities.ts';
import { Member, Organization, OrganizationAccessToken } from './entities.ts';
import {
  accessTokenCreateSchema,
  accessTokenSchema,
  organizationCreateSchema,
  organizationSchema,
  serializeAccessToken,
  serializeOrganization,
} from './schemas.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from './scope.ts';

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
const listSchema = (item: z.ZodType) =>
  z.object({ items: z.array(item), pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }) });

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
    async handler({ body, principal, em }) {
      if (principal.kind !== 'user') throw new Error('unreachable');
      if (await em.count(Organization, { slug: body.slug })) {
        throw fieldError(['body', 'slug'], 'An organization with this slug already exists.', 'value_error', body.slug);
      }
      try {
        const org = await em.transactional(async (tx) => {
          const o = tx.create(Organization, {
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
          tx.create(Member, { organization: o, user: tx.getReference(User, principal.userId), role: 'owner' });
          return o;
        });
        return serializeOrganization(org);
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) {
          throw fieldError(['body', 'slug'], 'An organization with this slug already exists.', 'value_error', body.slug);
        }
        throw err;
      }
    },
  }),
  route({
    method: 'get',
    path: '/v1/organizations/',
    summary: 'List organizations the caller can see',
    tags: ['organizations'],
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['organizations:read'] },
    query: z.object({
      ...paginationQuery,
      slug: z.string().optional(),
      sorting: sortingQuery(['created_at', 'slug', 'name']),
    }),
    response: listSchema(organizationSchema),
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
    auth: { kinds: ['user', 'organization', 'oauth2'], scopes: ['organizations:read'] },
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
    method: 'post',
    path: '/v1/organization-access-tokens/',
    summary: 'Create an organization access token; the token is shown once',
    tags: ['organization-access-tokens'],
    auth: { kinds: ['user'] },
    body: accessTokenCreateSchema,
    status: 201,
    response: z.object({ organization_access_token: accessTokenSchema, token: z.string() }),
    async handler({ body, principal, em }) {
      const orgId = await resolveWriteOrganization(em, principal, body.organization_id);
      const unknown = body.scopes.filter((s) => !ORGANIZATION_TOKEN_SCOPES.includes(s));
      if (unknown.length) throw fieldError(['body', 'scopes'], `Unknown scope: ${unknown.join(', ')}`, 'enum', unknown);
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
];
