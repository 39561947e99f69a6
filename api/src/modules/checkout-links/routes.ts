/**
 * /v1/checkout-links: create, list, read, update and (soft) delete, and the public
 * `GET /v1/checkout-links/{client_secret}/redirect` that starts a fresh checkout from the link.
 */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { CheckoutLink } from './entities.ts';
import { checkoutLinkCreateSchema, checkoutLinkSchema, checkoutLinkUpdateSchema, serializeCheckoutLink } from './schemas.ts';
import {
  CHECKOUT_LINK_POPULATE,
  createCheckoutFromLinkSecret,
  createCheckoutLink,
  deleteCheckoutLink,
  getVisibleCheckoutLink,
  updateCheckoutLink,
} from './service.ts';
import { inTransaction, findAndCountInOneSnapshot } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { commitNewCheckout } from '../checkouts/commit.ts';
import { checkoutUrl } from '../checkouts/schemas.ts';
import type { LinkPrefill } from '../checkouts/service.ts';
import { customerEmailSchema } from '../customers/schemas.ts';

const READ: AuthRequirement = sellerAuth('checkout_links:read');
const WRITE: AuthRequirement = sellerAuth('checkout_links:write');
const idParams = z.object({ id: z.uuid() });
const listSchema = listOf(checkoutLinkSchema);

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/checkout-links/',
    summary: 'Create a checkout link for a price, a product or several products',
    tags: ['checkout-links'],
    auth: WRITE,
    body: checkoutLinkCreateSchema,
    status: 201,
    response: checkoutLinkSchema,
    async handler({ body, principal, em, deps }) {
      const { result: link } = await inTransaction(em, (tx) => createCheckoutLink(tx, principal, body));
      return serializeCheckoutLink(link, deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkout-links/',
    summary: 'List checkout links',
    tags: ['checkout-links'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      product_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['created_at', 'label', 'success_url', 'allow_discount_codes']),
    }),
    response: listSchema,
    async handler({ query, principal, em, deps }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds }, deletedAt: null };
      if (query.product_id) {
        // Links offering any of the products; the match must not narrow the populated products.
        const matching = await em.find(
          CheckoutLink,
          { organization: { $in: orgIds }, deletedAt: null, products: { id: { $in: query.product_id } } },
          { fields: ['id'] },
        );
        where.id = { $in: matching.map((l) => l.id) };
      }
      const [items, total] = await findAndCountInOneSnapshot(em, CheckoutLink, where, {
        populate: CHECKOUT_LINK_POPULATE,
        populateWhere: 'all',
        orderBy: [
          ...toOrderBy(query.sorting, {
            created_at: 'createdAt',
            success_url: 'successUrl',
            allow_discount_codes: 'allowDiscountCodes',
          }),
          { id: 'asc' },
        ],
        ...pageOffset(query),
      });
      return paginated(
        items.map((l) => serializeCheckoutLink(l, deps.cfg.PUBLIC_URL)),
        total,
        query,
      );
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkout-links/:id',
    summary: 'Get a checkout link',
    tags: ['checkout-links'],
    auth: READ,
    params: idParams,
    response: checkoutLinkSchema,
    async handler({ params, principal, em, deps }) {
      return serializeCheckoutLink(await getVisibleCheckoutLink(em, principal, params.id), deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/checkout-links/:id',
    summary: 'Update a checkout link',
    tags: ['checkout-links'],
    auth: WRITE,
    params: idParams,
    body: checkoutLinkUpdateSchema,
    response: checkoutLinkSchema,
    async handler({ params, body, principal, em, deps }) {
      const { result: link } = await inTransaction(em, (tx) => updateCheckoutLink(tx, principal, params.id, body));
      return serializeCheckoutLink(link, deps.cfg.PUBLIC_URL);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/checkout-links/:id',
    summary: 'Delete a checkout link',
    tags: ['checkout-links'],
    auth: WRITE,
    params: idParams,
    status: 204,
    async handler({ params, principal, em }) {
      await inTransaction(em, (tx) => deleteCheckoutLink(tx, principal, params.id));
    },
  }),
  route({
    method: 'get',
    path: '/v1/checkout-links/:client_secret/redirect',
    summary: "Start a checkout from a link and redirect (302) to the checkout's page (no credentials)",
    tags: ['checkout-links'],
    auth: 'public',
    params: z.object({ client_secret: z.string().min(1).max(128) }),
    // Prefill; a value that does not validate is ignored rather than failing the buyer's visit.
    query: z.object({
      customer_email: z.string().max(320).optional(),
      customer_name: z.string().max(255).optional(),
      discount_code: z.string().max(256).optional(),
      amount: z.string().max(16).optional(),
    }),
    status: 302,
    async handler({ params, query, req, res, em, deps }) {
      const email = customerEmailSchema.safeParse(query.customer_email);
      const amount = query.amount !== undefined && /^\d{1,9}$/.test(query.amount) ? Number(query.amount) : undefined;
      const prefill: LinkPrefill = {
        customer_email: email.success ? email.data : undefined,
        customer_name: query.customer_name?.trim() || undefined,
        discount_code: query.discount_code?.trim() || undefined,
        amount,
        customer_ip_address: req.ip ?? null,
      };
      const checkout = await commitNewCheckout(em, deps, (tx) =>
        createCheckoutFromLinkSecret(tx, params.client_secret, prefill, { ttlSeconds: deps.cfg.CHECKOUT_TTL_SECONDS }),
      );
      if (!checkout) throw ResourceNotFound('Checkout link has no product available');
      res.redirect(302, checkoutUrl(deps.cfg.PUBLIC_URL, checkout.clientSecret));
    },
  }),
];
