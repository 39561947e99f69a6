/** /v1/webhooks: endpoint management, the delivery log and redelivery. */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { isoDateTime, queryList } from '../../kit/validation.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { WebhookDelivery, WebhookEndpoint } from './entities.ts';
import { deliverySchema, endpointCreateSchema, endpointSchema, endpointUpdateSchema, serializeDelivery } from './schemas.ts';
import { createEndpoint, deleteEndpoint, findVisibleEndpoint, readEndpoint, redeliverEvent, updateEndpoint } from './endpoints.ts';
import { createRoute, deleteRoute, getByIdRoute, idParams, listOf, sellerAuth, transact, updateRoute } from '../../kit/route-helpers.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

const READ = sellerAuth('webhooks:read');
const WRITE = sellerAuth('webhooks:write');
const tags = ['webhooks'];

export const routes: RouteSpec[] = [
  createRoute({
    path: '/v1/webhooks/endpoints',
    summary: 'Create a webhook endpoint; the signing secret is generated unless given',
    tags,
    auth: WRITE,
    body: endpointCreateSchema,
    response: endpointSchema,
    create: (tx, { body, principal, deps }) => createEndpoint(tx, deps.cfg, principal, body),
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/endpoints',
    summary: 'List webhook endpoints',
    tags,
    auth: READ,
    query: z.object({ ...paginationQuery, organization_id: queryList(z.uuid()).optional() }),
    response: listOf(endpointSchema),
    async handler({ query, principal, em, deps }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const [items, total] = await findAndCountInOneSnapshot(
        em,
        WebhookEndpoint,
        { organization: { $in: orgIds }, deletedAt: null },
        { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...pageOffset(query) },
      );
      return paginated(items.map((e) => readEndpoint(deps.cfg, e)), total, query);
    },
  }),
  getByIdRoute({
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Get a webhook endpoint',
    tags,
    auth: READ,
    response: endpointSchema,
    read: async ({ params, principal, em, deps }) => readEndpoint(deps.cfg, await findVisibleEndpoint(em, principal, params.id)),
  }),
  updateRoute({
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Update a webhook endpoint (re-enable it with enabled: true)',
    tags,
    auth: WRITE,
    body: endpointUpdateSchema,
    response: endpointSchema,
    update: (tx, { params, body, principal, deps }) => updateEndpoint(tx, deps.cfg, principal, params.id, body),
  }),
  deleteRoute({
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Delete a webhook endpoint',
    tags,
    auth: WRITE,
    remove: (tx, { params, principal }) => deleteEndpoint(tx, principal, params.id),
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/deliveries',
    summary: 'List delivery attempts, newest first',
    tags,
    auth: READ,
    query: z.object({
      ...paginationQuery,
      endpoint_id: queryList(z.uuid()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      start_timestamp: isoDateTime().optional(),
      end_timestamp: isoDateTime().optional(),
    }),
    response: listOf(deliverySchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { webhookEvent: { endpoint: { organization: { $in: orgIds } } } };
      if (query.endpoint_id) (where.webhookEvent as Record<string, unknown>).endpoint = { id: { $in: query.endpoint_id }, organization: { $in: orgIds } };
      const created: Record<string, Date> = {};
      if (query.start_timestamp) created.$gte = new Date(query.start_timestamp);
      if (query.end_timestamp) created.$lte = new Date(query.end_timestamp);
      if (Object.keys(created).length) where.createdAt = created;
      const [items, total] = await findAndCountInOneSnapshot(em, WebhookDelivery, where, {
        populate: ['webhookEvent'],
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeDelivery), total, query);
    },
  }),
  route({
    method: 'post',
    path: '/v1/webhooks/events/:id/redeliver',
    summary: 'Deliver a webhook event again (same webhook-id, new attempts)',
    tags,
    auth: WRITE,
    params: idParams,
    status: 202,
    async handler({ params, principal, em, deps }) {
      await transact(em, (tx, afterCommit) => redeliverEvent(tx, afterCommit, deps, principal, params.id));
      return {};
    },
  }),
];
