/**
 * /v1/subscriptions: the seller's list, CSV export and read (`subscriptions:read`), and changes
 * (`subscriptions:write`): PATCH (change product, or cancel at period end / uncancel / revoke) and
 * DELETE (revoke). Created by the checkout workflow; every change is validated here against the
 * database, then applied by the subscription's workflow (an update) and answered with the new state.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { paginationQuery, sortingQuery } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { CANCELLATION_REASONS, Subscription } from './entities.ts';
import { activeQuery } from './list.ts';
import { listSubscriptionsJson, subscriptionJson } from './read-sql.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription, subscriptionSchema } from './schemas.ts';
import { setCancelAtPeriodEnd, updateSubscriptionWorkflow } from './workflow-client.ts';
import { subscriptionsCsv } from './export.ts';

const READ: AuthRequirement = sellerAuth('subscriptions:read');
const WRITE: AuthRequirement = sellerAuth('subscriptions:write');

const subscriptionUpdateSchema = z.object({
  product_id: z.uuid().nullish(),
  proration_behavior: z.enum(['invoice', 'prorate']).nullish(),
  cancel_at_period_end: z.boolean().nullish(),
  revoke: z.literal(true).nullish(),
  customer_cancellation_reason: z.enum(CANCELLATION_REASONS).nullish(),
  customer_cancellation_comment: z.string().max(5000).nullish(),
});

async function visibleSubscription(em: EntityManager, principal: Parameters<typeof visibleOrganizationIds>[1], id: string) {
  const orgIds = await visibleOrganizationIds(em, principal);
  const s = await em.findOne(Subscription, { id, organization: { $in: orgIds } }, { populate: [...SUBSCRIPTION_POPULATE, 'organization'] });
  if (!s) throw ResourceNotFound('Subscription not found');
  return s;
}

async function reread(em: EntityManager, id: string) {
  const s = await em.fork().findOneOrFail(Subscription, { id }, { populate: SUBSCRIPTION_POPULATE });
  return serializeSubscription(s);
}

const listSchema = listOf(subscriptionSchema);


export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/subscriptions/',
    summary: 'List subscriptions',
    tags: ['subscriptions'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      product_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      discount_id: queryList(z.uuid()).optional(),
      active: activeQuery,
      sorting: sortingQuery(['customer', 'status', 'started_at', 'current_period_end', 'amount', 'product', 'discount'], ['-started_at']),
    }),
    response: listSchema,
    async handler(ctx) {
      const { query, principal, sql } = ctx;
      const orgIds = await scopedOrganizationIds(() => ctx.em, principal, query.organization_id);
      return listSubscriptionsJson(sql, { organizationIds: orgIds, ...query }, query.sorting, query);
    },
  }),
  // Before `/v1/subscriptions/:id`, which would otherwise take "export" for an id.
  route({
    method: 'get',
    path: '/v1/subscriptions/export',
    summary: 'Export subscriptions (CSV)',
    tags: ['subscriptions'],
    auth: READ,
    query: z.object({ organization_id: queryList(z.uuid()).optional() }),
    async handler({ query, principal, em, res }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const items = await em.find(
        Subscription,
        { organization: { $in: orgIds } },
        { populate: ['customer', 'product', 'price'], orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      );
      res
        .status(200)
        .type('text/csv; charset=utf-8')
        .setHeader('content-disposition', 'attachment; filename="subscriptions.csv"')
        .send(subscriptionsCsv(items));
      return undefined;
    },
  }),
  route({
    method: 'get',
    path: '/v1/subscriptions/:id',
    summary: 'Get a subscription',
    tags: ['subscriptions'],
    auth: READ,
    params: z.object({ id: z.uuid() }),
    response: subscriptionSchema,
    async handler(ctx) {
      const { params, principal, sql } = ctx;
      const orgIds = await visibleOrganizationIds(() => ctx.em, principal);
      const json = await subscriptionJson(sql, orgIds, params.id);
      if (!json) throw ResourceNotFound('Subscription not found');
      return json;
    },
  }),
  route({
    method: 'patch',
    path: '/v1/subscriptions/:id',
    summary: 'Update a subscription',
    tags: ['subscriptions'],
    auth: WRITE,
    params: z.object({ id: z.uuid() }),
    body: subscriptionUpdateSchema,
    response: subscriptionSchema,
    async handler({ params, body, principal, em, deps }) {
      const s = await visibleSubscription(em, principal, params.id);
      const cancelFields = body.cancel_at_period_end != null || body.revoke != null;
      if (body.product_id) {
        if (cancelFields) throw fieldError(['body'], 'Either change the product or cancel, not both.');
        await updateSubscriptionWorkflow(deps, s, 'changeProduct', { productId: body.product_id, prorationBehavior: body.proration_behavior ?? null });
        return reread(em, s.id);
      }
      if (body.revoke && body.cancel_at_period_end != null) {
        throw fieldError(['body', 'revoke'], 'Set either revoke or cancel_at_period_end, not both.');
      }
      const reason = { reason: body.customer_cancellation_reason, comment: body.customer_cancellation_comment };
      if (body.revoke) {
        await updateSubscriptionWorkflow(deps, s, 'revoke', reason);
      } else {
        await setCancelAtPeriodEnd(deps, s, body.cancel_at_period_end, reason);
      }
      return reread(em, s.id);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/subscriptions/:id',
    summary: 'Revoke a subscription',
    tags: ['subscriptions'],
    auth: WRITE,
    params: z.object({ id: z.uuid() }),
    response: subscriptionSchema,
    async handler({ params, principal, em, deps }) {
      const s = await visibleSubscription(em, principal, params.id);
      await updateSubscriptionWorkflow(deps, s, 'revoke', {});
      return reread(em, s.id);
    },
  }),
];
