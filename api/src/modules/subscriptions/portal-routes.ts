/**
 * /v1/customer-portal/subscriptions (bearer customer session): the customer's own subscriptions only
 * (another customer's is a 404). PATCH changes the product (when the organization allows customer
 * updates; its default proration behaviour) or cancels at period end / uncancels; DELETE cancels at
 * period end. Changes go through the subscription's workflow, like the seller's.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { paginated, paginationQuery, sortingQuery } from '../../kit/pagination.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { customerAuth, listOf } from '../../kit/route-helpers.ts';
import { checkoutScope, requireFullSession, withinScope } from '../customer-portal/scope.ts';
import { organizationSchema, serializeOrganization } from '../organizations/schemas.ts';
import { CANCELLATION_REASONS, Subscription } from './entities.ts';
import { activeQuery, listSubscriptions } from './list.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription, subscriptionSchema } from './schemas.ts';
import { subscriptionSettings } from './service.ts';
import { setCancelAtPeriodEnd, updateSubscriptionWorkflow } from './workflow-client.ts';

const read = customerAuth('customer_portal:read');
const write = customerAuth('customer_portal:write');
const asCustomer = (p: Principal) => p as CustomerPrincipal;


/** `CustomerSubscription`: the subscription with its product (and the product's organization) and price. */
export const customerSubscriptionSchema = subscriptionSchema.extend({
  product: subscriptionSchema.shape.product.and(z.object({ organization: organizationSchema })),
});

const POPULATE = [...SUBSCRIPTION_POPULATE, 'product.organization', 'organization'] as const;

function serializeCustomerSubscription(s: Subscription) {
  const base = serializeSubscription(s);
  return { ...base, product: { ...base.product, organization: serializeOrganization(s.product.organization) } };
}

/**
 * One of the customer's subscriptions (within a checkout-scoped session's reach), 404 otherwise. With
 * `change`, a checkout-scoped session may only cancel / uncancel the subscription its checkout created.
 */
async function ownSubscription(em: EntityManager, principal: Principal, id: string, change?: 'cancel' | 'product') {
  const scope = await checkoutScope(em, asCustomer(principal));
  const s = await em.findOne(
    Subscription,
    withinScope({ id, customer: asCustomer(principal).customerId }, scope?.subscriptionIds),
    { populate: POPULATE },
  );
  if (!s) throw ResourceNotFound('Subscription not found');
  if (scope && change && (change === 'product' || !scope.createdSubscriptionIds.includes(s.id))) {
    requireFullSession(principal, change === 'product' ? 'Changing the plan' : 'Cancelling this subscription');
  }
  return s;
}

async function reread(em: EntityManager, id: string) {
  return serializeCustomerSubscription(await em.fork().findOneOrFail(Subscription, { id }, { populate: POPULATE }));
}

const portalUpdateSchema = z.object({
  product_id: z.uuid().nullish(),
  cancel_at_period_end: z.boolean().nullish(),
  cancellation_reason: z.enum(CANCELLATION_REASONS).nullish(),
  cancellation_comment: z.string().max(5000).nullish(),
});

export const portalSubscriptionRoutes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/subscriptions/',
    summary: "List the customer's subscriptions",
    tags: ['customer_portal'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      product_id: queryList(z.uuid()).optional(),
      active: activeQuery,
      query: z.string().trim().max(256).nullish(),
      sorting: sortingQuery(['started_at', 'amount', 'status', 'organization', 'product'], ['-started_at']),
    }),
    response: listOf(customerSubscriptionSchema),
    async handler({ query, principal, em }) {
      const own: Record<string, unknown> = { customer: asCustomer(principal).customerId };
      if (query.organization_id) own.organization = { $in: query.organization_id };
      const scope = await checkoutScope(em, asCustomer(principal));
      const [items, total] = await listSubscriptions(em, withinScope(own, scope?.subscriptionIds), query, POPULATE);
      return paginated(items.map(serializeCustomerSubscription), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/subscriptions/:id',
    summary: 'Get one of the customer’s subscriptions',
    tags: ['customer_portal'],
    auth: read,
    params: z.object({ id: z.uuid() }),
    response: customerSubscriptionSchema,
    async handler({ params, principal, em }) {
      return serializeCustomerSubscription(await ownSubscription(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/customer-portal/subscriptions/:id',
    summary: 'Change the product of, cancel or uncancel one of the customer’s subscriptions',
    tags: ['customer_portal'],
    auth: write,
    params: z.object({ id: z.uuid() }),
    body: portalUpdateSchema,
    response: customerSubscriptionSchema,
    async handler({ params, body, principal, em, deps }) {
      const s = await ownSubscription(em, principal, params.id, body.product_id ? 'product' : 'cancel');
      if (body.product_id) {
        if (body.cancel_at_period_end != null) throw fieldError(['body'], 'Either change the product or cancel, not both.');
        if (!subscriptionSettings(s.organization.subscriptionSettings).allow_customer_updates) {
          throw NotPermitted('This organization does not allow customers to change their subscription.');
        }
        await updateSubscriptionWorkflow(deps, s, 'changeProduct', { productId: body.product_id, prorationBehavior: null });
      } else {
        await setCancelAtPeriodEnd(deps, s, body.cancel_at_period_end, { reason: body.cancellation_reason, comment: body.cancellation_comment });
      }
      return reread(em, s.id);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/customer-portal/subscriptions/:id',
    summary: 'Cancel one of the customer’s subscriptions at the end of its period',
    tags: ['customer_portal'],
    auth: write,
    params: z.object({ id: z.uuid() }),
    response: customerSubscriptionSchema,
    async handler({ params, principal, em, deps }) {
      const s = await ownSubscription(em, principal, params.id, 'cancel');
      await updateSubscriptionWorkflow(deps, s, 'cancel', {});
      return reread(em, s.id);
    },
  }),
];
