/**
 * /v1/customer-portal/orders (bearer customer session): the session customer's own orders, one
 * order, and its PDF invoice. Another customer's order is a 404.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, sortingQuery } from '../../kit/pagination.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { customerAuth, listOf } from '../../kit/route-helpers.ts';
import { Order } from '../orders/entities.ts';
import { INVOICE_POPULATE, invoiceUrl } from '../orders/invoice.ts';
import { listOrders, orderListQueryFields } from '../orders/list.ts';
import { ORDER_POPULATE, orderInvoiceSchema, orderSchema, serializeOrder } from '../orders/schemas.ts';
import { organizationSchema, serializeOrganization } from '../organizations/schemas.ts';
import { productSchema } from '../products/schemas.ts';
import { checkoutScope, withinScope } from './scope.ts';

const read = customerAuth('customer_portal:read');
const asCustomer = (p: Principal) => p as CustomerPrincipal;

/**
 * The customer's view of an order (`CustomerOrder`): the seller's read model without the seller's
 * metadata and the embedded customer / user, with the product's organization.
 */
export const customerOrderSchema = orderSchema
  .omit({ metadata: true, customer: true, user: true })
  .extend({ product: productSchema.extend({ organization: organizationSchema }) });
export type CustomerOrderOut = z.infer<typeof customerOrderSchema>;

const CUSTOMER_ORDER_POPULATE = [...ORDER_POPULATE, 'product.organization'] as const;

/** Needs CUSTOMER_ORDER_POPULATE loaded. */
export function serializeCustomerOrder(o: Order): CustomerOrderOut {
  const { metadata: _m, customer: _c, user: _u, ...rest } = serializeOrder(o);
  return { ...rest, product: { ...rest.product, organization: serializeOrganization(o.product.organization) } };
}

async function customerOrder(em: EntityManager, principal: CustomerPrincipal, id: string, populate: readonly string[]) {
  const scope = await checkoutScope(em, principal);
  const o = await em.findOne(
    Order,
    withinScope({ id, customer: principal.customerId }, scope?.orderIds),
    { populate: populate as unknown as typeof CUSTOMER_ORDER_POPULATE },
  );
  if (!o) throw ResourceNotFound('Order not found');
  return o;
}

const listSchema = listOf(customerOrderSchema);

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/orders/',
    summary: "List the customer's orders",
    tags: ['customer-portal'],
    auth: read,
    query: z.object({
      ...orderListQueryFields,
      subscription_id: queryList(z.uuid()).optional(),
      query: z.string().trim().max(255).optional(),
      sorting: sortingQuery(['created_at', 'amount', 'net_amount', 'organization', 'product', 'subscription']),
    }),
    response: listSchema,
    async handler({ query, principal, em }) {
      const own: Record<string, unknown> = { customer: asCustomer(principal).customerId };
      if (query.organization_id) own.organization = { $in: query.organization_id };
      const scope = await checkoutScope(em, asCustomer(principal));
      const [items, total] = await listOrders(em, withinScope(own, scope?.orderIds), query, CUSTOMER_ORDER_POPULATE);
      return paginated(items.map(serializeCustomerOrder), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/orders/:id',
    summary: 'Get one of the customer’s orders',
    tags: ['customer-portal'],
    auth: read,
    params: z.object({ id: z.uuid() }),
    response: customerOrderSchema,
    async handler({ params, principal, em }) {
      return serializeCustomerOrder(await customerOrder(em, asCustomer(principal), params.id, CUSTOMER_ORDER_POPULATE));
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/orders/:id/invoice',
    summary: "Get a URL to the PDF invoice of one of the customer's orders",
    tags: ['customer-portal'],
    auth: read,
    params: z.object({ id: z.uuid() }),
    response: orderInvoiceSchema,
    async handler({ params, principal, em, deps }) {
      const o = await customerOrder(em, asCustomer(principal), params.id, INVOICE_POPULATE);
      return { url: await invoiceUrl(deps.storage, o) };
    },
  }),
];
