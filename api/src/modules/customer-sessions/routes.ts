/** POST /v1/customer-sessions/ and the `polar_cst_` bearer resolver (customer principals). */
import { z } from 'zod/v4';
import { registerBearerResolver, type AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { customerSchema, serializeCustomer } from '../customers/schemas.ts';
import { inTransaction } from '../../kit/db.ts';
import { CUSTOMER_SESSION_TOKEN_PREFIX, createSellerCustomerSession, customerPortalUrl, resolveCustomerSessionToken } from './service.ts';

registerBearerResolver(CUSTOMER_SESSION_TOKEN_PREFIX, resolveCustomerSessionToken);

const WRITE: AuthRequirement = sellerAuth('customer_sessions:write');

const customerSessionCreateSchema = z
  .object({ customer_id: z.uuid().optional(), customer_external_id: z.string().min(1).optional() })
  .check((ctx) => {
    if (ctx.issues.length) return;
    if (ctx.value.customer_id === undefined && ctx.value.customer_external_id === undefined) {
      ctx.issues.push({
        code: 'custom',
        path: ['customer_id'],
        message: 'Either customer_id or customer_external_id is required',
        input: ctx.value,
      });
    }
  });

export const customerSessionSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  token: z.string(),
  expires_at: z.string(),
  customer_portal_url: z.string(),
  customer_id: z.uuid(),
  customer: customerSchema,
});

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/customer-sessions/',
    summary: 'Create a customer session (a one-hour customer portal token, shown once)',
    tags: ['customer-sessions'],
    auth: WRITE,
    body: customerSessionCreateSchema,
    status: 201,
    response: customerSessionSchema,
    async handler({ body, principal, em, deps }) {
      const { result } = await inTransaction(em, (tx) => createSellerCustomerSession(tx, principal, body));
      const { customer, session, token } = result;
      return {
        id: session.id,
        created_at: session.createdAt.toISOString(),
        modified_at: session.modifiedAt?.toISOString() ?? null,
        token,
        expires_at: session.expiresAt.toISOString(),
        customer_portal_url: customerPortalUrl(deps.cfg.PUBLIC_URL, customer.organization.slug, token),
        customer_id: customer.id,
        customer: serializeCustomer(customer),
      };
    },
  }),
];
