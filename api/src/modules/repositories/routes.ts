/** /v1/repositories (list, read, update profile settings) and /v1/external_organizations (list). Stored records only. */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { getByIdRoute, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { getVisibleRepository, updateRepositoryProfile } from './service.ts';
import { ExternalOrganization, PLATFORMS, Repository } from './entities.ts';
import {
  externalOrganizationSchema,
  repositorySchema,
  repositoryUpdateSchema,
  serializeExternalOrganization,
  serializeRepository,
} from './schemas.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const REPO_READ: AuthRequirement = sellerAuth('repositories:read');
const REPO_WRITE: AuthRequirement = sellerAuth('repositories:write');
const EXT_READ: AuthRequirement = sellerAuth('external_organizations:read');
const boolQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

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
      const [items, total] = await findAndCountInOneSnapshot(em, Repository, where, {
        populate: ['externalOrganization', 'organization'],
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeRepository), total, query);
    },
  }),
  getByIdRoute({
    path: '/v1/repositories/:id',
    summary: 'Get a repository',
    tags: ['repositories'],
    auth: REPO_READ,
    response: repositorySchema,
    read: async ({ params, principal, em }) => serializeRepository(await getVisibleRepository(em, principal, params.id)),
  }),
  updateRoute({
    path: '/v1/repositories/:id',
    summary: "Update a repository's profile settings",
    tags: ['repositories'],
    auth: REPO_WRITE,
    body: repositoryUpdateSchema,
    response: repositorySchema,
    update: (tx, { params, body, principal }) => updateRepositoryProfile(tx, principal, params.id, body),
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
      const [items, total] = await findAndCountInOneSnapshot(em, ExternalOrganization, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeExternalOrganization), total, query);
    },
  }),
];
