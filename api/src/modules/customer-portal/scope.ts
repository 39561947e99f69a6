/**
 * What a customer session may reach. A full session (seller-created with `POST /v1/customer-sessions/`,
 * or the portal's email sign-in) reaches everything of its customer. A checkout-scoped session (the
 * `customer_session_token` a checkout confirmation returns: the buyer typed an email and proved
 * nothing) reaches only what that checkout bought:
 * - the orders of that checkout;
 * - the subscription that checkout created, or the one it upgraded;
 * - the benefit grants of those orders and subscriptions, their license keys (and activations) and
 *   downloadables;
 * - `GET /customers/me`, read only, showing the buyer's own checkout details.
 * Anything else answers as if it did not exist (404, lists filtered); writes other than cancelling or
 * uncancelling the subscription that checkout created are 403 NotPermitted.
 */
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted } from '../../kit/errors.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { BenefitGrant } from '../benefits/grants.ts';
import { Checkout } from '../checkouts/entities.ts';
import { Order } from '../orders/entities.ts';
import { Subscription } from '../subscriptions/entities.ts';

export interface CheckoutScope {
  checkoutId: string;
  orderIds: string[];
  /** Created or upgraded by the checkout: readable. */
  subscriptionIds: string[];
  /** Created by the checkout: readable, and may be cancelled / uncancelled. */
  createdSubscriptionIds: string[];
  grantIds: string[];
  licenseKeyIds: string[];
}

/** The checkout id of a checkout-scoped session, or null for a full session. */
export function sessionCheckoutId(principal: Principal): string | null {
  return principal.kind === 'customer' ? (principal.checkoutId ?? null) : null;
}

/** Refuses (403) a write a checkout-scoped session may not make. */
export function requireFullSession(principal: Principal, what = 'This action'): void {
  if (sessionCheckoutId(principal)) {
    throw NotPermitted(`${what} needs a full customer session: sign in to the customer portal with your email.`);
  }
}

/** What a checkout-scoped session reaches; null for a full session (everything of its customer). */
export async function checkoutScope(em: EntityManager, principal: CustomerPrincipal): Promise<CheckoutScope | null> {
  const checkoutId = sessionCheckoutId(principal);
  if (!checkoutId) return null;
  const customer = principal.customerId;
  const [checkout, orders, created] = await Promise.all([
    em.findOne(Checkout, { id: checkoutId }, { fields: ['id', 'subscriptionId'] }),
    em.find(Order, { checkout: checkoutId, customer }, { fields: ['id'] }),
    em.find(Subscription, { checkout: checkoutId, customer }, { fields: ['id'] }),
  ]);
  const createdSubscriptionIds = created.map((s) => s.id);
  const subscriptionIds = [...createdSubscriptionIds];
  if (checkout?.subscriptionId) {
    const upgraded = await em.findOne(Subscription, { id: checkout.subscriptionId, customer }, { fields: ['id'] });
    if (upgraded && !subscriptionIds.includes(upgraded.id)) subscriptionIds.push(upgraded.id);
  }
  const orderIds = orders.map((o) => o.id);
  const or: Record<string, unknown>[] = [];
  if (orderIds.length) or.push({ orderId: { $in: orderIds } });
  if (subscriptionIds.length) or.push({ subscriptionId: { $in: subscriptionIds } });
  const grants = or.length ? await em.find(BenefitGrant, { customer, $or: or }, { fields: ['id', 'properties'] }) : [];
  const licenseKeyIds = grants
    .map((g) => (g.properties as Record<string, unknown>).license_key_id)
    .filter((id): id is string => typeof id === 'string');
  return { checkoutId, orderIds, subscriptionIds, createdSubscriptionIds, grantIds: grants.map((g) => g.id), licenseKeyIds };
}

/** Narrows a `where` to records whose `idKey` is among the ids a scope reaches (no-op when `ids` is undefined). */
export function withinScope(where: Record<string, unknown>, ids: string[] | undefined, idKey = 'id'): Record<string, unknown> {
  if (!ids) return where;
  return { $and: [where, { [idKey]: { $in: ids } }] };
}
