/** /v1/webhooks: endpoint management, the delivery log and redelivery. */
import { z } from 'zod/v4';
import { webhookAllowsPrivateUrls, type Config } from '../../config.ts';
import { fieldError, ResourceNotFound } from '../../kit/errors.ts';
import { refusedWebhookUrl } from './addresses.ts';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { isoDateTime, queryList } from '../../kit/validation.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { WebhookDelivery, WebhookEndpoint, WebhookEvent } from './entities.ts';
import {
  deliverySchema,
  endpointCreateSchema,
  endpointSchema,
  endpointUpdateSchema,
  serializeDelivery,
  serializeEndpoint,
} from './schemas.ts';
import { endpointSecret, markRetriesStarted, newWebhookSecret, sealSecret, startRetries } from './fan-out.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Principal } from '../../kit/principals.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';

const READ = sellerAuth('webhooks:read');
const WRITE = sellerAuth('webhooks:write');
const idParams = z.object({ id: z.uuid() });

/** 422 on `body.url` unless the configuration allows it (addresses.ts). */
function checkUrl(cfg: Config, url: string | undefined) {
  if (url === undefined) return;
  const refused = refusedWebhookUrl(url, webhookAllowsPrivateUrls(cfg));
  if (refused) throw fieldError(['body', 'url'], refused);
}

async function findEndpoint(em: EntityManager, principal: Principal, id: string) {
  const orgIds = await visibleOrganizationIds(em, principal);
  const endpoint = await em.findOne(WebhookEndpoint, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!endpoint) throw ResourceNotFound('Webhook endpoint not found');
  return endpoint;
}

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/webhooks/endpoints',
    summary: 'Create a webhook endpoint; the signing secret is generated unless given',
    tags: ['webhooks'],
    auth: WRITE,
    body: endpointCreateSchema,
    status: 201,
    response: endpointSchema,
    async handler({ body, principal, em, deps }) {
      checkUrl(deps.cfg, body.url);
      const orgId = await resolveWriteOrganization(em, principal, body.organization_id);
      const secret = body.secret ?? newWebhookSecret();
      const endpoint = em.create(WebhookEndpoint, {
        organization: em.getReference(Organization, orgId),
        url: body.url,
        format: body.format,
        secretSealed: sealSecret(deps.cfg, secret),
        events: [...new Set(body.events)],
        enabled: true,
        disabledAt: null,
        deletedAt: null,
      });
      await em.flush();
      return serializeEndpoint(endpoint, secret);
    },
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/endpoints',
    summary: 'List webhook endpoints',
    tags: ['webhooks'],
    auth: READ,
    query: z.object({ ...paginationQuery, organization_id: queryList(z.uuid()).optional() }),
    response: listOf(endpointSchema),
    async handler({ query, principal, em, deps }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const [items, total] = await em.findAndCount(
        WebhookEndpoint,
        { organization: { $in: orgIds }, deletedAt: null },
        { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], ...pageOffset(query) },
      );
      return paginated(items.map((e) => serializeEndpoint(e, endpointSecret(deps.cfg, e))), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Get a webhook endpoint',
    tags: ['webhooks'],
    auth: READ,
    params: idParams,
    response: endpointSchema,
    async handler({ params, principal, em, deps }) {
      const e = await findEndpoint(em, principal, params.id);
      return serializeEndpoint(e, endpointSecret(deps.cfg, e));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Update a webhook endpoint (re-enable it with enabled: true)',
    tags: ['webhooks'],
    auth: WRITE,
    params: idParams,
    body: endpointUpdateSchema,
    response: endpointSchema,
    async handler({ params, body, principal, em, deps }) {
      const e = await findEndpoint(em, principal, params.id);
      checkUrl(deps.cfg, body.url);
      if (body.url !== undefined) e.url = body.url;
      if (body.format !== undefined) e.format = body.format;
      if (body.events !== undefined) e.events = [...new Set(body.events)];
      if (body.secret !== undefined) e.secretSealed = sealSecret(deps.cfg, body.secret);
      if (body.enabled !== undefined) {
        e.enabled = body.enabled;
        e.disabledAt = body.enabled ? null : new Date();
      }
      await em.flush();
      return serializeEndpoint(e, endpointSecret(deps.cfg, e));
    },
  }),
  route({
    method: 'delete',
    path: '/v1/webhooks/endpoints/:id',
    summary: 'Delete a webhook endpoint',
    tags: ['webhooks'],
    auth: WRITE,
    params: idParams,
    status: 204,
    async handler({ params, principal, em }) {
      const e = await findEndpoint(em, principal, params.id);
      e.deletedAt = new Date();
      e.enabled = false;
      await em.flush();
    },
  }),
  route({
    method: 'get',
    path: '/v1/webhooks/deliveries',
    summary: 'List delivery attempts, newest first',
    tags: ['webhooks'],
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
      const [items, total] = await em.findAndCount(WebhookDelivery, where, {
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
    tags: ['webhooks'],
    auth: WRITE,
    params: idParams,
    status: 202,
    async handler({ params, principal, em, deps }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const we = await em.findOne(WebhookEvent, { id: params.id, endpoint: { organization: { $in: orgIds }, deletedAt: null } }, { populate: ['endpoint'] });
      if (!we) throw ResourceNotFound('Webhook event not found');
      // Committed first: the workflow reads the row. A start lost after the commit is found by the
      // dispatcher's sweep (an attempted event with no retry workflow) and started then.
      we.succeeded = null;
      we.retryStartedAt = null;
      await em.flush();
      if (we.attempts === 0) return {}; // not attempted yet: the dispatcher sends it
      const started = await startRetries(
        deps.temporal,
        deps.cfg,
        deps.cfg.TEMPORAL_TASK_QUEUE,
        {
          webhookEventId: we.id,
          outboxEventId: we.outboxEvent.id,
          endpointId: we.endpoint.id,
          firstAttempt: 1,
          organizationId: we.endpoint.organization.id,
          url: we.endpoint.url,
          eventType: we.type,
        },
        { redeliver: true, log: deps.log },
      );
      if (started) await markRetriesStarted(em, [we.id]);
      return {};
    },
  }),
];
