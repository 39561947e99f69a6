/**
 * /v1/checkouts: the seller's create, list, read and update (`checkouts:read|write`), and the
 * buyer's read and update by client secret (no credentials: the secret is a capability URL).
 * The buyer's confirmation (`POST /v1/checkouts/client/{client_secret}/confirm`) charges and hands
 * the rest to the `checkout-confirm:<id>` workflow (confirm.ts), whose start it records with the
 * confirmation and makes right after it.
 */
import { z } from 'zod/v4';
import { checkoutConfirmWorkflowId } from '@emporia/workflows/ids';
import { inTransaction, findAndCountInOneSnapshot } from '../../kit/db.ts';
import { checkoutConfirmRun } from '../../kit/run-metadata.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { CHECKOUT_STATUSES, Checkout } from './entities.ts';
import {
  checkoutConfirmSchema,
  checkoutConfirmedSchema,
  checkoutCreateSchema,
  checkoutPublicSchema,
  checkoutSchema,
  checkoutUpdatePublicSchema,
  checkoutUpdateSchema,
  serializeCheckout,
  serializeCheckoutPublic,
  serializeCheckoutPublicWithProducts,
} from './schemas.ts';
import { confirmCheckout } from './confirm.ts';
import { commitNewCheckoutRead } from './commit.ts';
import { createCheckoutSql } from './create-sql.ts';
import { CHECKOUT_POPULATE } from './schemas.ts';
import { createCheckout, getCheckoutBySecret, getVisibleCheckout } from './service.ts';
import { updateCheckoutBySecret, updateVisibleCheckout } from './updates.ts';

const READ: AuthRequirement = sellerAuth('checkouts:read');
const WRITE: AuthRequirement = sellerAuth('checkouts:write');
const idParams = z.object({ id: z.uuid() });
const secretParams = z.object({ client_secret: z.string().min(1).max(128) });
const listSchema = listOf(checkoutSchema);

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/checkouts/',
    summary: 'Create a checkout session for a price, a product or several products',
    tags: ['checkouts'],
    auth: WRITE,
    body: checkoutCreateSchema,
    status: 201,
    response: checkoutSchema,
    async handler({ body, principal, em, deps }) {
      const written = await createCheckoutSql(em, deps, principal, body);
      if (written) return written;
      const created = await commitNewCheckoutRead(em, deps, (tx) =>
        createCheckout(tx, principal, body, { ttlSeconds: deps.cfg.CHECKOUT_TTL_SECONDS }),
      );
      return created!.read;
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkouts/',
    summary: 'List checkout sessions',
    tags: ['checkouts'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      product_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      status: queryList(z.enum(CHECKOUT_STATUSES)).optional(),
      sorting: sortingQuery(['created_at', 'expires_at', 'status']),
    }),
    response: listSchema,
    async handler({ query, principal, em, deps }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.product_id) where.product = { $in: query.product_id };
      if (query.customer_id) where.customer = { $in: query.customer_id };
      if (query.status) {
        // Open checkouts past their expiry read as expired, before the expiry workflow writes it.
        const now = new Date();
        const wanted = new Set(query.status);
        const or: Record<string, unknown>[] = [];
        const stored = query.status.filter((s) => s !== 'open' && s !== 'expired');
        if (stored.length) or.push({ status: { $in: stored } });
        if (wanted.has('open')) or.push({ status: 'open', expiresAt: { $gt: now } });
        if (wanted.has('expired')) or.push({ status: 'expired' }, { status: 'open', expiresAt: { $lte: now } });
        where.$or = or;
      }
      const [items, total] = await findAndCountInOneSnapshot(em, Checkout, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt', expires_at: 'expiresAt' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      if (items.length) await em.populate(items, CHECKOUT_POPULATE);
      return paginated(
        items.map((c) => serializeCheckout(c, deps.cfg.PUBLIC_URL)),
        total,
        query,
      );
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkouts/:id',
    summary: 'Get a checkout session',
    tags: ['checkouts'],
    auth: READ,
    params: idParams,
    response: checkoutSchema,
    async handler({ params, principal, em, deps }) {
      return serializeCheckout(await getVisibleCheckout(em, principal, params.id), deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/checkouts/:id',
    summary: 'Update a checkout session (only while open)',
    tags: ['checkouts'],
    auth: WRITE,
    params: idParams,
    body: checkoutUpdateSchema,
    response: checkoutSchema,
    async handler({ params, body, principal, em, deps }) {
      const { result: c } = await inTransaction(em, (tx) => updateVisibleCheckout(tx, principal, params.id, body, deps.cfg.PUBLIC_URL));
      return serializeCheckout(c, deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkouts/client/:client_secret',
    summary: 'Get a checkout session by its client secret (no credentials)',
    tags: ['checkouts'],
    auth: 'public',
    errors: [403, 409, 410],
    params: secretParams,
    response: checkoutPublicSchema,
    async handler({ params, em, deps }) {
      return serializeCheckoutPublic(await getCheckoutBySecret(em, params.client_secret), deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/checkouts/client/:client_secret',
    summary: 'Update a checkout session by its client secret (no credentials; only while open)',
    tags: ['checkouts'],
    auth: 'public',
    errors: [403, 409, 410],
    params: secretParams,
    body: checkoutUpdatePublicSchema,
    response: checkoutPublicSchema,
    async handler({ params, body, em, deps }) {
      const { result: c } = await inTransaction(em, (tx) => updateCheckoutBySecret(tx, params.client_secret, body, deps.cfg.PUBLIC_URL));
      return serializeCheckoutPublic(c, deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'post',
    path: '/v1/checkouts/client/:client_secret/confirm',
    summary: 'Confirm a checkout session by its client secret: pay and start fulfilment (no credentials)',
    tags: ['checkouts'],
    auth: 'public',
    errors: [403, 409, 410],
    params: secretParams,
    body: checkoutConfirmSchema,
    response: checkoutConfirmedSchema,
    async handler({ params, body, em, deps }) {
      const { checkout: c, products, customerSessionToken } = await confirmCheckout(em, deps, params.client_secret, body, {
        deps,
        workflow: (checkout) => ({
          workflowType: 'checkoutConfirmWorkflow',
          taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
          workflowId: checkoutConfirmWorkflowId(checkout.id),
          args: [{ checkoutId: checkout.id }],
          metadata: checkoutConfirmRun({
            checkoutId: checkout.id,
            organizationId: checkout.organization.id,
            customerId: checkout.customer?.id ?? null,
            customerEmail: checkout.customerEmail ?? null,
            productName: checkout.product.name,
            amount: checkout.totalAmount ?? null,
            currency: checkout.currency ?? null,
            recurringInterval: checkout.product.recurringInterval ?? null,
          }),
        }),
      });
      return { ...serializeCheckoutPublicWithProducts(c, deps.cfg.PUBLIC_URL, products), customer_session_token: customerSessionToken };
    },
  }),
];
