/**
 * The payments plugin. It sells for one seller organization (`AUTH_PAYMENTS_ORGANIZATION`):
 * - `GET /checkout?productId=` and `GET /checkout/{slug}` (slugs from `AUTH_CHECKOUT_PRODUCTS`) create
 *   a hosted checkout (for a signed-in user: customer external id = user id, email and name
 *   prefilled) and redirect to it (302; `{url, redirect: true}` when the caller asks for JSON);
 * - `GET /portal` creates a customer session for the signed-in user and redirects to the portal;
 * - `GET /state` returns the signed-in user's customer state (active subscriptions, granted benefits).
 * Errors are the plugin's: 400 "Checkout is not enabled" / "Product Id not found" / "Customer portal
 * is not enabled", 500 "Checkout creation failed" / "Customer portal creation failed" /
 * "Subscriptions list failed".
 *
 * The webhook receiver: `POST /polar/webhooks` verifies a Standard Webhooks signed
 * body (headers webhook-id, webhook-timestamp, webhook-signature with space-separated `v1,<base64>`
 * entries; HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret, as `validateEvent` from
 * `@polar-sh/sdk/webhooks` does) and answers `{received: true}`. Errors are the plugin's:
 * 404 "Webhooks not enabled" when the plugin is off (no secret, no organization), 500 "webhook
 * secret not found" when it sells for an organization without a secret, 400 "Webhook Error: <reason>"
 * when verification or parsing fails. (The plugin's "Webhook error: see server logs" is for failing
 * event handlers; this receiver only acknowledges and logs events, so it has none that can fail.)
 */
import express from 'express';
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { inTransaction } from '../../kit/db.ts';
import type { OrganizationPrincipal } from '../../kit/principals.ts';
import { AuthError } from '../../auth/errors.ts';
import { authEndpoint, currentSession, parseQuery, type AuthContext, type AuthEndpoint } from '../../auth/http.ts';
import { paymentsOrganization, upsertUserCustomer } from '../../auth/payments-sync.ts';
import { commitNewCheckout } from '../checkouts/commit.ts';
import { checkoutCreateSchema, checkoutUrl } from '../checkouts/schemas.ts';
import { createCheckout } from '../checkouts/service.ts';
import { serializeCustomer } from '../customers/schemas.ts';
import { customerState, emitCustomerEvent } from '../customers/service.ts';
import { createCustomerSession, customerPortalUrl } from '../customer-sessions/service.ts';
import type { Organization } from '../organizations/entities.ts';
import { Product } from '../products/entities.ts';
import { WebhookVerificationError, rawBodyOf, verifyWebhook } from './webhook.ts';

export { WebhookVerificationError, verifyWebhook };

/** The plugin's messages (SPEC section 8, "Payment plugin"). */
export const PAYMENTS_ERRORS = {
  CHECKOUT_NOT_ENABLED: () => new AuthError(400, 'Checkout is not enabled'),
  PRODUCT_ID_NOT_FOUND: () => new AuthError(400, 'Product Id not found'),
  CHECKOUT_CREATION_FAILED: () => new AuthError(500, 'Checkout creation failed'),
  PORTAL_NOT_ENABLED: () => new AuthError(400, 'Customer portal is not enabled'),
  USER_NOT_FOUND: () => new AuthError(400, 'User not found'),
  PORTAL_CREATION_FAILED: () => new AuthError(500, 'Customer portal creation failed'),
  SUBSCRIPTIONS_LIST_FAILED: () => new AuthError(500, 'Subscriptions list failed'),
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const authPaymentsEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/polar/webhooks',
    middleware: [express.raw({ type: () => true, limit: '1mb' })],
    handler: async ({ req, deps }) => {
      const secret = deps.cfg.POLAR_WEBHOOK_SECRET;
      // The plugin is on when it sells for an organization or has a secret; on without a secret is a
      // configuration error.
      if (!secret && !deps.cfg.AUTH_PAYMENTS_ORGANIZATION) throw new AuthError(404, 'Webhooks not enabled');
      if (!secret) {
        deps.log.error({ requestId: req.id }, 'payments webhook received but POLAR_WEBHOOK_SECRET is not set');
        throw new AuthError(500, 'webhook secret not found');
      }
      const body = rawBodyOf(req);
      const headers = {
        'webhook-id': req.get('webhook-id'),
        'webhook-timestamp': req.get('webhook-timestamp'),
        'webhook-signature': req.get('webhook-signature'),
      };
      let event: { type?: unknown };
      try {
        verifyWebhook(secret, body, headers);
        event = JSON.parse(body) as { type?: unknown };
        if (!event || typeof event !== 'object' || typeof event.type !== 'string') {
          throw new Error('Invalid webhook payload: missing event type');
        }
      } catch (err) {
        const reason = err instanceof Error ? err.message : String(err);
        deps.log.warn({ requestId: req.id, reason }, 'payments webhook rejected');
        throw new AuthError(400, `Webhook Error: ${reason}`);
      }
      deps.log.info({ requestId: req.id, type: event.type, webhookId: headers['webhook-id'] }, 'payments webhook received');
      return { received: true };
    },
  }),

  authEndpoint({ method: 'get', path: '/checkout', handler: (ctx) => checkout(ctx, null) }),
  authEndpoint({ method: 'get', path: '/checkout/:slug', handler: (ctx) => checkout(ctx, String(ctx.req.params.slug)) }),

  authEndpoint({
    method: 'get',
    path: '/portal',
    session: 'session',
    handler: async (ctx) => {
      const { me, deps } = ctx;
      const organization = await paymentsOrganization(ctx.em, deps.cfg);
      if (!organization) throw PAYMENTS_ERRORS.PORTAL_NOT_ENABLED();
      let url: string;
      try {
        const { result } = await inTransaction(ctx.em, async (tx) => {
          const customer = await userCustomer(tx, organization, me.user);
          const { token } = createCustomerSession(tx, customer);
          await tx.flush();
          return customerPortalUrl(deps.cfg.PUBLIC_URL, organization.slug, token);
        });
        url = result;
      } catch (err) {
        deps.log.error({ err, requestId: ctx.req.id }, 'payments portal session failed');
        throw PAYMENTS_ERRORS.PORTAL_CREATION_FAILED();
      }
      return navigate(ctx, url);
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/state',
    session: 'session',
    handler: async (ctx) => {
      const { me, deps } = ctx;
      const organization = await paymentsOrganization(ctx.em, deps.cfg);
      if (!organization) throw PAYMENTS_ERRORS.PORTAL_NOT_ENABLED();
      try {
        const { result } = await inTransaction(ctx.em, async (tx) => {
          const customer = await userCustomer(tx, organization, me.user);
          return { ...serializeCustomer(customer), ...(await customerState(tx, customer)) };
        });
        return result;
      } catch (err) {
        deps.log.error({ err, requestId: ctx.req.id }, 'payments customer state failed');
        throw PAYMENTS_ERRORS.SUBSCRIPTIONS_LIST_FAILED();
      }
    },
  }),
];

/** The user's customer in the organization, created (or matched by email) when the sync has not yet. */
async function userCustomer(em: EntityManager, organization: Organization, user: { id: string; email: string; name: string }) {
  const { customer, kind } = await upsertUserCustomer(em, organization, user);
  if (kind) {
    emitCustomerEvent(em, customer, kind);
    await em.flush();
  }
  return customer;
}

/** Browsers navigating here get a 302; a client asking for JSON gets `{url, redirect: true}` and navigates itself. */
function navigate(ctx: AuthContext, url: string) {
  if (ctx.req.accepts(['html', 'json']) === 'json') return { url, redirect: true };
  ctx.res.redirect(302, url);
  return undefined;
}

async function checkout(ctx: AuthContext, slug: string | null) {
  const { deps } = ctx;
  const organization = await paymentsOrganization(ctx.em, deps.cfg);
  if (!organization) throw PAYMENTS_ERRORS.CHECKOUT_NOT_ENABLED();
  const q = parseQuery(z.object({ productId: z.string().optional() }), ctx.req);
  const productId = slug !== null ? deps.cfg.AUTH_CHECKOUT_PRODUCTS[slug] : q.productId;
  if (!productId || !UUID.test(productId)) throw PAYMENTS_ERRORS.PRODUCT_ID_NOT_FOUND();
  const product = await ctx.em.findOne(Product, { id: productId, organization: organization.id, isArchived: false });
  if (!product) throw PAYMENTS_ERRORS.PRODUCT_ID_NOT_FOUND();

  const me = await currentSession(ctx);
  let url: string;
  try {
    const principal: OrganizationPrincipal = {
      kind: 'organization',
      organizationId: organization.id,
      tokenId: 'auth-payments',
      scopes: new Set(['checkouts:write']),
    };
    if (me) {
      // The customer exists before the checkout, so the checkout carries it (and its external id).
      await inTransaction(ctx.em, (tx) => userCustomer(tx, organization, me.user));
    }
    const input = checkoutCreateSchema.parse({
      product_id: product.id,
      ...(me
        ? { customer_external_id: me.user.id, customer_email: me.user.email, ...(me.user.name ? { customer_name: me.user.name } : {}) }
        : {}),
      ...(deps.cfg.AUTH_CHECKOUT_SUCCESS_URL ? { success_url: deps.cfg.AUTH_CHECKOUT_SUCCESS_URL } : {}),
    });
    const c = await commitNewCheckout(ctx.em, deps, (tx) =>
      createCheckout(tx, principal, input, { ttlSeconds: deps.cfg.CHECKOUT_TTL_SECONDS }),
    );
    url = checkoutUrl(deps.cfg.PUBLIC_URL, c!.clientSecret);
  } catch (err) {
    deps.log.error({ err, requestId: ctx.req.id }, 'payments checkout creation failed');
    throw PAYMENTS_ERRORS.CHECKOUT_CREATION_FAILED();
  }
  return navigate(ctx, url);
}
