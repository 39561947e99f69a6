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
import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type Router } from 'express';
import { z } from 'zod/v4';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { OrganizationPrincipal } from '../../kit/principals.ts';
import { commitNewCheckout } from '../../modules/checkouts/routes.ts';
import { checkoutCreateSchema, checkoutUrl } from '../../modules/checkouts/schemas.ts';
import { createCheckout } from '../../modules/checkouts/service.ts';
import { serializeCustomer } from '../../modules/customers/schemas.ts';
import { customerState } from '../../modules/customers/service.ts';
import { createCustomerSession, customerPortalUrl } from '../../modules/customer-sessions/service.ts';
import type { Organization } from '../../modules/organizations/entities.ts';
import { Product } from '../../modules/products/entities.ts';
import { signWebhook } from '../../modules/webhooks/signing.ts';
import { emitCustomerEvent } from '../../modules/customers/service.ts';
import { inTransaction } from '../../kit/db.ts';
import { paymentsOrganization, upsertUserCustomer } from '../payments-sync.ts';
import { AuthError } from '../errors.ts';
import { currentSession, endpoint, parseQuery, requireSession, type AuthContext } from '../http.ts';

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

/** Seconds a delivery's timestamp may be away from now, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {}

/**
 * Standard Webhooks verification, message for message as the reference library: missing headers,
 * a non-numeric timestamp, a timestamp outside the tolerance, then no `v1` signature matching.
 */
export function verifyWebhook(
  secret: string,
  body: string,
  headers: Record<string, string | undefined>,
  now = new Date(),
): void {
  const id = headers['webhook-id'];
  const signature = headers['webhook-signature'];
  const timestampHeader = headers['webhook-timestamp'];
  if (!id || !signature || !timestampHeader) throw new WebhookVerificationError('Missing required headers');
  const timestamp = parseInt(timestampHeader, 10);
  if (Number.isNaN(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers');
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (nowSeconds - timestamp > WEBHOOK_TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp > nowSeconds + WEBHOOK_TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too new');
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).split(',')[1]!);
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new WebhookVerificationError('No matching signature found');
}

/**
 * The body exactly as sent: the raw bytes when an earlier parser kept them (`rawBody`) or this
 * route's own raw parser read them (non-JSON content types); else the parsed JSON serialized again,
 * which is byte-identical for compact JSON (what Polar and our own deliveries send).
 */
function rawBodyOf(req: Request): string {
  const kept = (req as Request & { rawBody?: Buffer | string }).rawBody;
  if (kept !== undefined) return Buffer.isBuffer(kept) ? kept.toString('utf8') : kept;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (typeof req.body === 'string') return req.body;
  if (req.body === undefined) return '';
  return JSON.stringify(req.body);
}

export function paymentsRoutes(router: Router, deps: Deps): void {
  router.post('/polar/webhooks', express.raw({ type: () => true, limit: '1mb' }));
  endpoint(router, deps, 'post', '/polar/webhooks', async ({ req }) => {
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
  });

  endpoint(router, deps, 'get', '/checkout', (ctx) => checkout(ctx, null));
  endpoint(router, deps, 'get', '/checkout/:slug', (ctx) => checkout(ctx, String(ctx.req.params.slug)));

  endpoint(router, deps, 'get', '/portal', async (ctx) => {
    const me = await requireSession(ctx);
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
  });

  endpoint(router, deps, 'get', '/state', async (ctx) => {
    const me = await requireSession(ctx);
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
  });
}

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
