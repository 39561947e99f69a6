/** /v1/organizations and /v1/organization-access-tokens. */
import { z } from 'zod/v4';
import type { Principal } from '../../kit/principals.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { createRoute, deleteRoute, getByIdRoute, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { Organization, OrganizationAccessToken } from './entities.ts';
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
import { visibleOrganizationIds } from './scope.ts';
import { createOrganizationForUser, updateOrganization } from './service.ts';
import { administeredIds, createAccessToken, revokeAccessToken, updateAccessToken } from './access-tokens.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const tags = ['organizations'];
const tokenTags = ['organization-access-tokens'];
const asUser = (principal: Principal) => {
  if (principal.kind !== 'user') throw new Error('unreachable');
  return principal;
};

export const organizationRoutes = [
  createRoute({
    path: '/v1/organizations/',
    summary: 'Create an organization; the signed-in user becomes its owner',
    tags,
    auth: { kinds: ['user'], scopes: ['organizations:write'] },
    body: organizationCreateSchema,
    response: organizationSchema,
    create: (tx, { body, principal, deps }) => createOrganizationForUser(tx, deps.cfg, asUser(principal).userId, body),
  }),
  route({
    method: 'get',
    path: '/v1/organizations/',
    summary: 'List organizations the caller can see',
    tags,
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
      const [items, total] = await findAndCountInOneSnapshot(em, Organization, where, {
        orderBy: toOrderBy(query.sorting, { created_at: 'createdAt' }),
        ...pageOffset(query),
      });
      return paginated(items.map(serializeOrganization), total, query);
    },
  }),
  getByIdRoute({
    path: '/v1/organizations/:id',
    summary: 'Get an organization',
    tags,
    auth: sellerAuth('organizations:read'),
    response: organizationSchema,
    async read({ params, principal, em }) {
      const ids = await visibleOrganizationIds(em, principal);
      const org = ids.includes(params.id) ? await em.findOne(Organization, { id: params.id }) : null;
      if (!org) throw ResourceNotFound('Organization not found');
      return serializeOrganization(org);
    },
  }),
  updateRoute({
    path: '/v1/organizations/:id',
    summary: 'Update an organization (owners and admins)',
    tags,
    auth: { kinds: ['user', 'organization'], scopes: ['organizations:write'] },
    body: organizationUpdateSchema,
    response: organizationSchema,
    update: (tx, { params, body, principal }) => updateOrganization(tx, principal, params.id, body),
  }),
  createRoute({
    path: '/v1/organization-access-tokens/',
    summary: 'Create an organization access token; the token is shown once',
    tags: tokenTags,
    auth: { kinds: ['user'] },
    body: accessTokenCreateSchema,
    response: z.object({ organization_access_token: accessTokenSchema, token: z.string() }),
    create: (tx, { body, principal }) => createAccessToken(tx, asUser(principal), body),
  }),
  route({
    method: 'get',
    path: '/v1/organization-access-tokens/',
    summary: 'List the live access tokens of the organizations the caller administers',
    tags: tokenTags,
    auth: { kinds: ['user'] },
    query: z.object({
      ...paginationQuery,
      organization_id: z.uuid().optional(),
      sorting: sortingQuery(['created_at', 'comment', 'last_used_at']),
    }),
    response: listOf(accessTokenSchema),
    async handler({ query, principal, em }) {
      let ids = await administeredIds(em, asUser(principal).userId);
      if (query.organization_id) ids = ids.filter((id) => id === query.organization_id);
      const [items, total] = await findAndCountInOneSnapshot(
        em,
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
  updateRoute({
    path: '/v1/organization-access-tokens/:id',
    summary: 'Update the comment or scopes of an access token',
    tags: tokenTags,
    auth: { kinds: ['user'] },
    body: accessTokenUpdateSchema,
    response: accessTokenSchema,
    update: (tx, { params, body, principal, afterCommit }) => updateAccessToken(tx, afterCommit, asUser(principal).userId, params.id, body),
  }),
  deleteRoute({
    path: '/v1/organization-access-tokens/:id',
    summary: 'Revoke an access token',
    tags: tokenTags,
    auth: { kinds: ['user'] },
    remove: (tx, { params, principal, afterCommit }) => revokeAccessToken(tx, afterCommit, asUser(principal).userId, params.id),
  }),
];
