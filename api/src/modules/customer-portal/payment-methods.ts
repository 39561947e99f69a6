/**
 * /v1/customer-portal/customers/me/payment-methods (bearer customer session): the session customer's
 * saved cards. Adding one saves a card through the processor without charging it (setup) from a
 * confirmation token; PATCH `{ "default": true }` makes one the default (the card renewals and dunning
 * retries charge); deleting one detaches it at the processor. Another customer's method is a 404.
 */
import { z } from 'zod/v4';
import { inTransaction } from '../../kit/db.ts';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import type { PaymentMethod } from '../payment-methods/entities.ts';
import { listPaymentMethods } from '../payment-methods/service.ts';
import { requireFullSession, sessionCheckoutId } from './scope.ts';
import { addPaymentMethod, makeDefaultPaymentMethod, removePaymentMethod } from './wallet.ts';

const kinds: Principal['kind'][] = ['customer'];
const read = { kinds, scopes: ['customer_portal:read'] };
const write = { kinds, scopes: ['customer_portal:write'] };
const asCustomer = (p: Principal) => p as CustomerPrincipal;

/** `PaymentMethodCard` as the SDK parses it (`type: card`, card details nested under `card`). */
export const paymentMethodSchema = z.object({
  id: z.uuid(),
  type: z.string(),
  created_at: z.string(),
  default: z.boolean(),
  card: z.object({
    brand: z.string(),
    last4: z.string(),
    exp_month: z.number().int(),
    exp_year: z.number().int(),
    wallet: z.string().nullable(),
  }),
});
export type PaymentMethodOut = z.infer<typeof paymentMethodSchema>;

export function serializePaymentMethod(pm: PaymentMethod): PaymentMethodOut {
  return {
    id: pm.id,
    type: pm.type,
    created_at: pm.createdAt.toISOString(),
    default: pm.isDefault,
    card: { brand: pm.brand, last4: pm.last4, exp_month: pm.expMonth, exp_year: pm.expYear, wallet: pm.wallet ?? null },
  };
}

/** POST body (`CustomerPaymentMethodCreate`): every key required. */
export const paymentMethodCreateSchema = z.object({
  confirmation_token_id: z.string().trim().min(1).max(255),
  set_default: z.boolean(),
  return_url: z.url().max(2048),
});

/** PATCH body: the only change a customer makes to a saved card is making it the default. */
export const paymentMethodUpdateSchema = z.object({
  default: z.literal(true, { error: 'Only true is accepted: make another card the default instead.' }),
});


export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/customers/me/payment-methods',
    summary: "List the customer's saved payment methods",
    tags: ['customer-portal'],
    auth: read,
    query: z.object({ ...paginationQuery }),
    response: z.object({
      items: z.array(paymentMethodSchema),
      pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }),
    }),
    async handler({ query, principal, em }) {
      // A checkout-scoped session sees no saved cards (they existed before its checkout).
      if (sessionCheckoutId(principal)) return paginated([], 0, query);
      const [items, total] = await listPaymentMethods(em, asCustomer(principal).customerId, pageOffset(query));
      return paginated(items.map(serializePaymentMethod), total, query);
    },
  }),
  route({
    method: 'post',
    path: '/v1/customer-portal/customers/me/payment-methods',
    summary: 'Save a payment method for the customer (from a confirmation token; no charge)',
    tags: ['customer-portal'],
    auth: write,
    body: paymentMethodCreateSchema,
    status: 201,
    response: paymentMethodSchema,
    async handler({ body, principal, em, deps }) {
      requireFullSession(principal, 'Saving a payment method');
      const { customerId } = asCustomer(principal);
      const pm = await addPaymentMethod(em, deps.processor, customerId, body);
      return serializePaymentMethod(pm);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/customer-portal/customers/me/payment-methods/:id',
    summary: 'Make one of the customer’s saved payment methods the default (renewals charge it)',
    tags: ['customer-portal'],
    auth: write,
    params: z.object({ id: z.uuid() }),
    body: paymentMethodUpdateSchema,
    response: paymentMethodSchema,
    async handler({ params, principal, em }) {
      requireFullSession(principal, 'Changing the default payment method');
      const { customerId } = asCustomer(principal);
      const { result: pm } = await inTransaction(em, (tx) => makeDefaultPaymentMethod(tx, customerId, params.id));
      return serializePaymentMethod(pm);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/customer-portal/customers/me/payment-methods/:id',
    summary: 'Delete one of the customer’s saved payment methods',
    tags: ['customer-portal'],
    auth: write,
    params: z.object({ id: z.uuid() }),
    status: 204,
    async handler({ params, principal, em, deps }) {
      requireFullSession(principal, 'Deleting a payment method');
      const { customerId } = asCustomer(principal);
      const { result: pm } = await inTransaction(em, (tx) => removePaymentMethod(tx, customerId, params.id));
      // The card stays usable at the processor until detached; a failure here leaves it orphaned
      // there but never chargeable by us (the row is deleted).
      await deps.processor
        .detachPaymentMethod(pm.processorId)
        .catch((err: unknown) => deps.log.warn({ err, paymentMethodId: pm.id }, 'payment method detach failed'));
    },
  }),
];
