/** Customer sessions: issuing `polar_cst_…` tokens and resolving them into customer principals. */
import type { EntityManager } from '../../kit/db.ts';
import { randomToken, sha256Hex } from '../../kit/crypto.ts';
import { fieldError } from '../../kit/errors.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { visibleOrganizationIds } from '../organizations/scope.ts';
import type { Checkout } from '../checkouts/entities.ts';
import { Customer } from '../customers/entities.ts';
import { CustomerSession } from './entities.ts';

export const CUSTOMER_SESSION_TOKEN_PREFIX = 'polar_cst_';
export const CUSTOMER_SESSION_TTL_MS = 60 * 60 * 1000;
export const CUSTOMER_PORTAL_SCOPES = ['customer_portal:read', 'customer_portal:write'] as const;

/** The live customer a create body names, among the caller's organizations; 422 on the field otherwise. */
export async function resolveSessionCustomer(
  em: EntityManager,
  principal: Principal,
  body: { customer_id?: string; customer_external_id?: string },
): Promise<Customer> {
  const orgIds = await visibleOrganizationIds(em, principal);
  if (body.customer_id) {
    const c = await em.findOne(
      Customer,
      { id: body.customer_id, organization: { $in: orgIds }, deletedAt: null },
      { populate: ['organization'] },
    );
    if (!c) throw fieldError(['body', 'customer_id'], 'Customer does not exist.', 'value_error', body.customer_id);
    return c;
  }
  const c = await em.findOne(
    Customer,
    { externalId: body.customer_external_id!, organization: { $in: orgIds }, deletedAt: null },
    { populate: ['organization'], orderBy: { createdAt: 'asc' } },
  );
  if (!c) {
    throw fieldError(['body', 'customer_external_id'], 'Customer does not exist.', 'value_error', body.customer_external_id);
  }
  return c;
}

/**
 * Creates a session for the customer; the raw token is returned once and only its hash is stored.
 * With `checkout`, the session is checkout-scoped: it reaches only what that checkout bought (the
 * token a checkout confirmation returns, whose buyer has proved nothing about the email typed).
 */
export function createCustomerSession(
  em: EntityManager,
  customer: Customer,
  options: { checkout?: Checkout } = {},
): { session: CustomerSession; token: string } {
  const token = randomToken(CUSTOMER_SESSION_TOKEN_PREFIX, 32);
  const session = em.create(CustomerSession, {
    customer,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(Date.now() + CUSTOMER_SESSION_TTL_MS),
    checkout: options.checkout ?? null,
  });
  return { session, token };
}

/** The seller's `POST /v1/customer-sessions/`: a session for the customer the body names (422 when not theirs), written in the caller's transaction. */
export async function createSellerCustomerSession(
  tx: EntityManager,
  principal: Principal,
  body: { customer_id?: string; customer_external_id?: string },
): Promise<{ customer: Customer; session: CustomerSession; token: string }> {
  const customer = await resolveSessionCustomer(tx, principal, body);
  const { session, token } = createCustomerSession(tx, customer);
  await tx.flush();
  return { customer, session, token };
}

/** The principal a `polar_cst_…` token stands for, or null when unknown, expired or its customer is deleted. */
export async function resolveCustomerSessionToken(em: EntityManager, token: string): Promise<CustomerPrincipal | null> {
  if (!token.startsWith(CUSTOMER_SESSION_TOKEN_PREFIX)) return null;
  const session = await em.findOne(
    CustomerSession,
    { tokenHash: sha256Hex(token), expiresAt: { $gt: new Date() }, customer: { deletedAt: null } },
    { populate: ['customer'] },
  );
  if (!session) return null;
  return {
    kind: 'customer',
    customerId: session.customer.id,
    organizationId: session.customer.organization.id,
    sessionId: session.id,
    scopes: new Set(CUSTOMER_PORTAL_SCOPES),
    checkoutId: session.checkout?.id ?? null,
  };
}

export function customerPortalUrl(publicUrl: string, organizationSlug: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/portal/${encodeURIComponent(organizationSlug)}?customer_session_token=${encodeURIComponent(token)}`;
}
