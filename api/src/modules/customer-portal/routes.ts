/**
 * /v1/customer-portal (bearer customer session `polar_cst_…`): the customer's own record, benefit
 * grants and license keys; the public organization page; and the public license key calls
 * (validate / activate / deactivate by key + organization id, no credentials).
 */
import { z } from 'zod/v4';
import { inTransaction, type EntityManager, findAndCountInOneSnapshot } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { BENEFIT_TYPES } from '../benefits/entities.ts';
import { BenefitGrant } from '../benefits/grants.ts';
import { Checkout } from '../checkouts/entities.ts';
import { serializeBillingAddress } from '../customers/schemas.ts';
import { LicenseKey } from '../license-keys/entities.ts';
import {
  licenseKeyActivationReadSchema,
  licenseKeySchema,
  licenseKeyWithActivationsSchema,
  serializeActivation,
  serializeLicenseKey,
  serializeLicenseKeyWithActivations,
} from '../license-keys/schemas.ts';
import { activateLicenseKey, deactivateLicenseKey, licenseKeyPage, validateLicenseKey } from '../license-keys/service.ts';
import { Organization } from '../organizations/entities.ts';
import { Product } from '../products/entities.ts';
import { PRODUCT_POPULATE, serializeProductPublic } from '../products/schemas.ts';
import {
  customerBenefitGrantSchema,
  customerBenefitGrantUpdateSchema,
  customerOrganizationSchema,
  licenseKeyActivateSchema,
  licenseKeyDeactivateSchema,
  licenseKeyValidateSchema,
  portalCustomerSchema,
  portalCustomerUpdateSchema,
  serializeCustomerBenefitGrant,
  serializeCustomerOrganization,
  serializePortalCustomer,
  validatedLicenseKeySchema,
} from './schemas.ts';
import { checkoutScope, requireFullSession, sessionCheckoutId, withinScope } from './scope.ts';
import { findCustomerGrant, GRANT_POPULATE, sessionCustomer, updateCustomerGrant, updateSessionCustomer } from './service.ts';
import { routes as planChangeRoutes } from './plan-change.ts';
import { routes as oauthAccountRoutes } from './oauth-accounts.ts';
import { routes as portalConfigRoutes } from './portal-config.ts';

const kinds: Principal['kind'][] = ['customer'];
const read = { kinds, scopes: ['customer_portal:read'] };
const write = { kinds, scopes: ['customer_portal:write'] };
const idParams = z.object({ id: z.uuid() });
const listOf = (item: z.ZodType) =>
  z.object({ items: z.array(item), pagination: z.object({ total_count: z.number().int(), max_page: z.number().int() }) });

/** Routes with `kinds: ['customer']` only ever see a customer principal. */
const asCustomer = (p: Principal) => p as CustomerPrincipal;

/**
 * Grant ids of the customer that came from the given checkouts: through the subscription the checkout
 * created, or an order carrying the checkout id (once the orders table exists).
 */
async function grantIdsFromCheckouts(em: EntityManager, customerId: string, checkoutIds: string[]): Promise<string[]> {
  const checkouts = await em.find(Checkout, { id: { $in: checkoutIds } }, { fields: ['id', 'subscriptionId'] });
  const subscriptionIds = checkouts.map((c) => c.subscriptionId).filter((s): s is string => !!s);
  const conn = em.getConnection();
  const rows: { id: string }[] = subscriptionIds.length
    ? await conn.execute(`select id from benefit_grants where customer_id = ? and subscription_id = any(?::uuid[])`, [
        customerId,
        `{${subscriptionIds.join(',')}}`,
      ])
    : [];
  const [probe] = await conn.execute<{ has_orders: boolean }[]>(
    `select exists (select 1 from information_schema.columns
       where table_schema = current_schema() and table_name = 'orders' and column_name = 'checkout_id') as has_orders`,
  );
  if (probe?.has_orders) {
    const orderRows: { id: string }[] = await conn.execute(
      `select g.id from benefit_grants g join orders o on o.id = g.order_id
        where g.customer_id = ? and o.checkout_id = any(?::uuid[])`,
      [customerId, `{${checkoutIds.join(',')}}`],
    );
    rows.push(...orderRows);
  }
  return rows.map((r) => r.id);
}

const GRANT_SORT: Record<string, string[]> = {
  granted_at: ['grantedAt'],
  type: ['benefit', 'type'],
  organization: ['benefit', 'organization', 'slug'],
};

function grantOrderBy(sorting: string[]) {
  return sorting.map((s) => {
    const dir = s.startsWith('-') ? 'desc' : 'asc';
    const path = GRANT_SORT[s.replace(/^-/, '')] ?? ['createdAt'];
    return path.reduceRight<Record<string, unknown>>((acc, key, i) => ({ [key]: i === path.length - 1 ? dir : acc }), {});
  });
}

export const routes = [
  ...planChangeRoutes,
  ...oauthAccountRoutes,
  ...portalConfigRoutes,
  // ---- Customer ------------------------------------------------------------------------------------
  route({
    method: 'get',
    path: '/v1/customer-portal/customers/me',
    summary: 'Get the customer of the session',
    tags: ['customer-portal'],
    auth: read,
    response: portalCustomerSchema,
    async handler({ principal, em }) {
      const customer = serializePortalCustomer(await sessionCustomer(em, asCustomer(principal)));
      const checkoutId = sessionCheckoutId(principal);
      if (!checkoutId) return customer;
      // A checkout-scoped session shows what the buyer typed in that checkout, never the stored profile.
      const c = await em.findOneOrFail(Checkout, { id: checkoutId });
      return {
        ...customer,
        name: c.customerName ?? null,
        billing_address: serializeBillingAddress(c.customerBillingAddress),
        tax_id: c.customerTaxId ? ([c.customerTaxId, null] as [string, null]) : null,
        oauth_accounts: {},
      };
    },
  }),
  route({
    method: 'patch',
    path: '/v1/customer-portal/customers/me',
    summary: 'Update the customer of the session (email, name, billing address, tax id)',
    tags: ['customer-portal'],
    auth: write,
    body: portalCustomerUpdateSchema,
    response: portalCustomerSchema,
    async handler({ body, principal, em }) {
      requireFullSession(principal, 'Updating your details');
      const { result: c } = await inTransaction(em, (tx) => updateSessionCustomer(tx, asCustomer(principal), body));
      return serializePortalCustomer(c);
    },
  }),

  // ---- Organization (public) -------------------------------------------------------------------------
  route({
    method: 'get',
    path: '/v1/customer-portal/organizations/:slug',
    summary: 'Get an organization and its products by slug (no credentials needed)',
    tags: ['customer-portal'],
    auth: 'public',
    params: z.object({ slug: z.string().min(1).max(255) }),
    response: customerOrganizationSchema,
    async handler({ params, em }) {
      const org = await em.findOne(Organization, { slug: params.slug });
      if (!org) throw ResourceNotFound('Organization not found');
      const products = await em.find(
        Product,
        { organization: org, isArchived: false },
        { populate: PRODUCT_POPULATE, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] },
      );
      return serializeCustomerOrganization(org, products.map(serializeProductPublic));
    },
  }),

  // ---- Benefit grants --------------------------------------------------------------------------------
  route({
    method: 'get',
    path: '/v1/customer-portal/benefit-grants/',
    summary: "List the customer's benefit grants",
    tags: ['customer-portal'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      type: queryList(z.enum(BENEFIT_TYPES)).optional(),
      benefit_id: queryList(z.uuid()).optional(),
      organization_id: queryList(z.uuid()).optional(),
      checkout_id: queryList(z.uuid()).optional(),
      order_id: queryList(z.uuid()).optional(),
      subscription_id: queryList(z.uuid()).optional(),
      sorting: sortingQuery(['granted_at', 'type', 'organization'], ['-granted_at']),
    }),
    response: listOf(customerBenefitGrantSchema),
    async handler({ query, principal, em }) {
      const { customerId } = asCustomer(principal);
      const where: Record<string, unknown> = { customer: customerId };
      const benefit: Record<string, unknown> = {};
      if (query.type) benefit.type = { $in: query.type };
      if (query.organization_id) benefit.organization = { $in: query.organization_id };
      if (query.benefit_id) benefit.id = { $in: query.benefit_id };
      if (Object.keys(benefit).length) where.benefit = benefit;
      if (query.order_id) where.orderId = { $in: query.order_id };
      if (query.subscription_id) where.subscriptionId = { $in: query.subscription_id };
      if (query.checkout_id) where.id = { $in: await grantIdsFromCheckouts(em, customerId, query.checkout_id) };
      const scope = await checkoutScope(em, asCustomer(principal));
      const [items, total] = await findAndCountInOneSnapshot(em, BenefitGrant, withinScope(where, scope?.grantIds), {
        populate: GRANT_POPULATE,
        orderBy: [...grantOrderBy(query.sorting), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeCustomerBenefitGrant), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/benefit-grants/:id',
    summary: 'Get one of the customer’s benefit grants',
    tags: ['customer-portal'],
    auth: read,
    params: idParams,
    response: customerBenefitGrantSchema,
    async handler({ params, principal, em }) {
      return serializeCustomerBenefitGrant(await findCustomerGrant(em, asCustomer(principal), params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/customer-portal/benefit-grants/:id',
    summary: 'Update one of the customer’s benefit grants (the linked account of Discord and GitHub grants)',
    tags: ['customer-portal'],
    auth: write,
    params: idParams,
    body: customerBenefitGrantUpdateSchema,
    response: customerBenefitGrantSchema,
    async handler({ params, body, principal, em, deps }) {
      // GitHub / Discord: the account is checked with the provider, then the grant proceeds (benefits/accounts.ts).
      if (sessionCheckoutId(principal)) {
        // 404 for what the scope does not reach, 403 for its own grants: it may not change them.
        await findCustomerGrant(em, asCustomer(principal), params.id);
        requireFullSession(principal, 'Updating a benefit grant');
      }
      const { result, afterCommit } = await inTransaction(em, (tx, after) =>
        updateCustomerGrant(tx, after, deps, asCustomer(principal).customerId, params.id, body),
      );
      await afterCommit();
      return serializeCustomerBenefitGrant(result.grant);
    },
  }),

  // ---- License keys --------------------------------------------------------------------------------
  route({
    method: 'get',
    path: '/v1/customer-portal/license-keys/',
    summary: "List the customer's license keys",
    tags: ['customer-portal'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      benefit_id: queryList(z.uuid()).optional(),
    }),
    response: listOf(licenseKeySchema),
    async handler({ query, principal, em }) {
      const where: Record<string, unknown> = { customer: asCustomer(principal).customerId };
      if (query.organization_id) where.organization = { $in: query.organization_id };
      if (query.benefit_id) where.benefit = { $in: query.benefit_id };
      const scope = await checkoutScope(em, asCustomer(principal));
      return licenseKeyPage(em, withinScope(where, scope?.licenseKeyIds), query);
    },
  }),
  route({
    method: 'post',
    path: '/v1/customer-portal/license-keys/validate',
    summary: 'Validate a license key (no credentials; key + organization id)',
    tags: ['customer-portal'],
    auth: 'public',
    errors: [403, 404],
    body: licenseKeyValidateSchema,
    response: validatedLicenseKeySchema,
    async handler({ body, em }) {
      const { result } = await inTransaction(em, (tx) => validateLicenseKey(tx, body));
      return { ...serializeLicenseKey(result.key), activation: result.activation ? serializeActivation(result.activation) : null };
    },
  }),
  route({
    method: 'post',
    path: '/v1/customer-portal/license-keys/activate',
    summary: 'Activate a license key on one more machine (no credentials; key + organization id)',
    tags: ['customer-portal'],
    auth: 'public',
    errors: [403, 404],
    body: licenseKeyActivateSchema,
    response: licenseKeyActivationReadSchema,
    async handler({ body, em }) {
      const { result } = await inTransaction(em, (tx) => activateLicenseKey(tx, body));
      return { ...serializeActivation(result.activation), license_key: serializeLicenseKey(result.key) };
    },
  }),
  route({
    method: 'post',
    path: '/v1/customer-portal/license-keys/deactivate',
    summary: 'Deactivate one activation of a license key (no credentials; key + organization id)',
    tags: ['customer-portal'],
    auth: 'public',
    errors: [403, 404],
    body: licenseKeyDeactivateSchema,
    status: 204,
    async handler({ body, em }) {
      await inTransaction(em, (tx) => deactivateLicenseKey(tx, body));
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/license-keys/:id',
    summary: 'Get one of the customer’s license keys with its activations',
    tags: ['customer-portal'],
    auth: read,
    params: idParams,
    response: licenseKeyWithActivationsSchema,
    async handler({ params, principal, em }) {
      const scope = await checkoutScope(em, asCustomer(principal));
      const key = await em.findOne(
        LicenseKey,
        withinScope({ id: params.id, customer: asCustomer(principal).customerId }, scope?.licenseKeyIds),
        { populate: ['customer', 'activations'] },
      );
      if (!key) throw ResourceNotFound('License key not found');
      return serializeLicenseKeyWithActivations(key);
    },
  }),
];
