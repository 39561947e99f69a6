/** /v1/subscriptions: the seller's list and read (`subscriptions:read`). Created by the checkout workflow. */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from './entities.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription, subscriptionSchema } from './schemas.ts';

const READ: AuthRequirement = { kinds: ['user', 'organization', 'oauth2'], scopes: ['subscriptions:read'] };

const listSchema = z.object({
  items: z.array(subscriptionSchema),
  pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
});

const boolQuery = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

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
      active: boolQuery.nullish(),
      sorting: sortingQuery(['started_at', 'current_period_end', 'amount', 'status'], ['-started_at']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      let orgIds = await visibleOrganizationIds(em, principal);
      if (query.organization_id) orgIds = orgIds.filter((id) => query.organization_id!.includes(id));
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.product_id) where.product = { $in: query.product_id };
      if (query.customer_id) where.customer = { $in: query.customer_id };
      if (query.discount_id) where.discount = { $in: query.discount_id };
      if (query.active != null) where.status = query.active ? { $in: ACTIVE_SUBSCRIPTION_STATUSES } : { $nin: ACTIVE_SUBSCRIPTION_STATUSES };
      const [items, total] = await em.findAndCount(Subscription, where, {
        orderBy: [
          ...toOrderBy(query.sorting, { started_at: 'startedAt', current_period_end: 'currentPeriodEnd', amount: 'amount', status: 'status' }),
          { id: 'asc' },
        ],
        ...pageOffset(query),
      });
      if (items.length) await em.populate(items, SUBSCRIPTION_POPULATE);
      return paginated(items.map(serializeSubscription), total, query);
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
    async handler({ params, principal, em }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const s = await em.findOne(Subscription, { id: params.id, organization: { $in: orgIds } }, { populate: SUBSCRIPTION_POPULATE });
      if (!s) throw ResourceNotFound('Subscription not found');
      return serializeSubscription(s);
    },
  }),
];
