/**
 * Polar's legacy pledge routes for the seller (scopes `issues:read` / `issues:write`): create, search,
 * read, and move a received pledge through its states. Reads are scoped to the caller's
 * organizations; another organization's pledge is a 404.
 */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { getByIdRoute, idParams, listOf, sellerAuth, transact } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds, visibleOrganizationIds } from '../organizations/scope.ts';
import { PLEDGE_STATES, PLEDGE_TYPES, Pledge } from './entities.ts';
import { pledgeCreateSchema, pledgeSchema, pledgeStateUpdateSchema, serializePledge } from './schemas.ts';
import { PLEDGE_POPULATE, getVisiblePledge, issuePledgesSum, movePledge, recordPledge } from './service.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const READ = sellerAuth('issues:read');
const WRITE = sellerAuth('issues:write');

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/pledges/',
    summary: "Record a pledge towards an issue of one of the organization's repositories",
    tags: ['pledges'],
    auth: WRITE,
    body: pledgeCreateSchema,
    status: 201,
    response: pledgeSchema,
    handler: ({ body, principal, em }) => transact(em, (tx) => recordPledge(tx, principal, body)),
  }),
  route({
    method: 'get',
    path: '/v1/pledges/search',
    summary: 'Search pledges received by the organization',
    tags: ['pledges'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      repository_id: queryList(z.uuid()).optional(),
      issue_number: z.coerce.number().int().min(1).optional(),
      state: queryList(z.enum(PLEDGE_STATES)).optional(),
      type: queryList(z.enum(PLEDGE_TYPES)).optional(),
      sorting: sortingQuery(['created_at', 'amount']),
    }),
    response: listOf(pledgeSchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.repository_id) where.repository = { $in: query.repository_id };
      if (query.issue_number) where.issueNumber = query.issue_number;
      if (query.state) where.state = { $in: query.state };
      if (query.type) where.type = { $in: query.type };
      const [items, total] = await findAndCountInOneSnapshot(em, Pledge, where, {
        populate: PLEDGE_POPULATE,
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      const out = [];
      for (const p of items) out.push(serializePledge(p, await issuePledgesSum(em, p)));
      return paginated(out, total, query);
    },
  }),
  getByIdRoute({
    path: '/v1/pledges/:id',
    summary: 'Get a pledge',
    tags: ['pledges'],
    auth: READ,
    response: pledgeSchema,
    async read({ params, principal, em }) {
      const p = await getVisiblePledge(em, await visibleOrganizationIds(em, principal), params.id);
      return serializePledge(p, await issuePledgesSum(em, p));
    },
  }),
  route({
    method: 'post',
    path: '/v1/pledges/:id/state',
    summary: 'Move a received pledge to another state (payment confirmed, issue solved, dispute, refund, cancel)',
    tags: ['pledges'],
    auth: WRITE,
    params: idParams,
    body: pledgeStateUpdateSchema,
    response: pledgeSchema,
    handler: ({ params, body, principal, em }) => transact(em, (tx) => movePledge(tx, principal, params.id, body.state)),
  }),
];
