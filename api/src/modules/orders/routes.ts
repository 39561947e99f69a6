/**
 * /v1/orders: the seller's list, read and invoice (`orders:read`). Orders are written by the checkout
 * and subscription workflows.
 */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { sortingQuery } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { Order } from './entities.ts';
import { INVOICE_POPULATE, invoiceUrl } from './invoice.ts';
import { orderListQueryFields } from './list.ts';
import { listOrdersJson, orderJson } from './read-sql.ts';
import { orderInvoiceSchema, orderSchema } from './schemas.ts';

const READ: AuthRequirement = sellerAuth('orders:read');

const listSchema = listOf(orderSchema);

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/orders/',
    summary: 'List orders',
    tags: ['orders'],
    auth: READ,
    query: z.object({
      ...orderListQueryFields,
      discount_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      checkout_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'amount', 'net_amount', 'customer', 'product', 'discount', 'subscription']),
    }),
    response: listSchema,
    async handler(ctx) {
      const { query, principal, sql } = ctx;
      const orgIds = await scopedOrganizationIds(() => ctx.em, principal, query.organization_id);
      return listOrdersJson(sql, orgIds, query, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/orders/:id',
    summary: 'Get an order',
    tags: ['orders'],
    auth: READ,
    params: z.object({ id: z.uuid() }),
    response: orderSchema,
    async handler(ctx) {
      const { params, principal, sql } = ctx;
      const orgIds = await visibleOrganizationIds(() => ctx.em, principal);
      const json = await orderJson(sql, orgIds, params.id);
      if (!json) throw ResourceNotFound('Order not found');
      return json;
    },
  }),
  route({
    method: 'get',
    path: '/v1/orders/:id/invoice',
    summary: "Get a URL to the order's PDF invoice (generated on the first call, then reused)",
    tags: ['orders'],
    auth: READ,
    params: z.object({ id: z.uuid() }),
    response: orderInvoiceSchema,
    async handler({ params, principal, em, deps }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const o = await em.findOne(Order, { id: params.id, organization: { $in: orgIds } }, { populate: INVOICE_POPULATE });
      if (!o) throw ResourceNotFound('Order not found');
      return { url: await invoiceUrl(deps.storage, o) };
    },
  }),
];
