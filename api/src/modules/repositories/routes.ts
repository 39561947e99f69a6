/** /v1/repositories (list, read, update profile settings) and /v1/external_organizations (list). Stored records only. */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import type { EntityManager } from '../../kit/db.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { ExternalOrganization, PLATFORMS, Repository } from './entities.ts';
import {
  externalOrganizationSchema,
  repositorySchema,
  repositoryUpdateSchema,
  serializeExternalOrganization,
  serializeRepository,
} from './schemas.ts';

const REPO_READ: AuthRequirement = sellerAuth('repositories:read');
const REPO_WRITE: AuthRequirement = sellerAuth('repositories:write');
const EXT_READ: AuthRequirement = sellerAuth('external_organizations:read');
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

async function getVisibleRepository(em: EntityManager, principal: Principal, id: string): Promise<Repository> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const r = await em.findOne(
    Repository,
    { id, organization: { $in: orgIds } },
    { populate: ['externalOrganization', 'organization'] },
  );
  if (!r) throw ResourceNotFound('Repository not found');
  return r;
}

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/repositories/',
    summary: 'List repositories',
    tags: ['repositories'],
    auth: REPO_READ,
    query: z.object({
      ...paginationQuery,
      platform: queryList(z.enum(PLATFORMS)).optional(),
      name: queryList(z.string()).optional(),
      external_organization_name: queryList(z.string()).optional(),
      is_private: boolQuery.optional(),
      organization_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'name', 'stars']),
   }),
    response: listOf(repositorySchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.platform) where.platform = { $in: query.platform };
      if (query.name) where.name = { $in: query.name };
      if (query.external_organization_name) where.externalOrganization = { name: { $in: query.external_organization_name } };
      if (query.is_private !== undefined) where.isPrivate = query.is_private;
      const [items, total] = await em.findAndCount(Repository, where, {
        populate: ['externalOrganization', 'organization'],
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeRepository), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/repositories/:id',
    summary: 'Get a repository',
    tags: ['repositories'],
    auth: REPO_READ,
    params: z.object({ id: z.uuid() }),
    response: repositorySchema,
    async handler({ params, principal, em }) {
      return serializeRepository(await getVisibleRepository(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/repositories/:id',
    summary: "Update a repository's profile settings",
    tags: ['repositories'],
    auth: REPO_WRITE,
    params: z.object({ id: z.uuid() }),
    body: repositoryUpdateSchema,
    response: repositorySchema,
    async handler({ params, body, principal, em }) {
      const r = await getVisibleRepository(em, principal, params.id);
      const u = body.profile_settings;
      if (u) {
        const next = { ...r.profileSettings };
        if (u.set_description) next.description = u.description || null;
        if (u.set_cover_image_url) next.cover_image_url = u.cover_image_url ?? null;
        if (u.featured_organizations != null) next.featured_organizations = u.featured_organizations;
        if (u.highlighted_subscription_tiers != null) next.highlighted_subscription_tiers = u.highlighted_subscription_tiers;
        if (u.links != null) next.links = u.links;
        r.profileSettings = next;
        await em.flush();
      }
      return serializeRepository(r);
    },
  }),
  route({
    method: 'get',
    path: '/v1/external_organizations/',
    summary: 'List external organizations',
    tags: ['external_organizations'],
    auth: EXT_READ,
    query: z.object({
      ...paginationQuery,
      platform: queryList(z.enum(PLATFORMS)).optional(),
      name: queryList(z.string()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'name']),
    }),
    response: listOf(externalOrganizationSchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.platform) where.platform = { $in: query.platform };
      if (query.name) where.name = { $in: query.name };
      const [items, total] = await em.findAndCount(ExternalOrganization, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeExternalOrganization), total, query);
    },
  }),
];
