/** The buyer at confirmation: the fields confirmation needs, the customer found or created for the checkout, and the one-active-subscription rule. */
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, RequestValidationError, fieldError, type ValidationIssue } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { Organization } from '../organizations/entities.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from '../subscriptions/entities.ts';
import { Checkout } from './entities.ts';
import { validateCustomFieldData } from './custom-field-data.ts';

export const AlreadyActiveSubscriptionError = (detail = 'You already have an active subscription.') =>
  new ApiError(403, 'AlreadyActiveSubscriptionError', detail);

/**
 * The customer a confirmation buys for, as Polar does: the checkout's own customer when the seller
 * tied it to one (customer_id, or a customer_external_id that existed), whatever email was typed;
 * otherwise the organization's customer with the buyer's email; otherwise none yet (created in step 3).
 * Refused before any charge (step 1) and again under the lock (step 3): the checkout's customer was
 * deleted since, or no customer has the email but its customer_external_id now belongs to another
 * customer (creating one would break that external id's uniqueness).
 */
export async function findCustomer(em: EntityManager, c: Checkout): Promise<Customer | null> {
  if (c.customer) {
    if (c.customer.deletedAt) throw fieldError(['body', 'customer_id'], 'The customer of this checkout was deleted.', 'value_error', c.customer.id);
    return c.customer;
  }
  const byEmail = await em.findOne(Customer, { organization: c.organization.id, email: c.customerEmail!, deletedAt: null });
  if (byEmail || !c.customerExternalId) return byEmail;
  if (await em.count(Customer, { organization: c.organization.id, externalId: c.customerExternalId, deletedAt: null })) {
    throw fieldError(
      ['body', 'customer_email'],
      "This checkout's external customer ID belongs to a customer with another email address.",
      'value_error',
      c.customerEmail,
    );
  }
  return null;
}

/** `lookup: false` when the caller knows no customer exists (a unique violation on insert says otherwise). */
export async function findOrCreateCustomer(
  em: EntityManager,
  c: Checkout,
  opts: { lookup: boolean } = { lookup: true },
): Promise<{ customer: Customer; created: boolean; updated: boolean }> {
  const existing = opts.lookup || c.customer ? await findCustomer(em, c) : null;
  if (existing) {
    let updated = false;
    if (!existing.name && c.customerName) {
      existing.name = c.customerName;
      updated = true;
    }
    if (!existing.billingAddress && c.customerBillingAddress) {
      existing.billingAddress = c.customerBillingAddress;
      updated = true;
    }
    return { customer: existing, created: false, updated };
  }
  const customer = em.create(Customer, {
    organization: em.getReference(Organization, c.organization.id),
    email: c.customerEmail!,
    emailVerified: false,
    name: c.customerName ?? null,
    externalId: c.customerExternalId ?? null,
    billingAddress: c.customerBillingAddress ?? null,
    taxId: null,
    metadata: { ...c.customerMetadata },
    userId: null,
    deletedAt: null,
    processorCustomerId: null,
  });
  return { customer, created: true, updated: false };
}

/** One active (or trialing) subscription per customer and organization, unless the organization allows several. */
export async function assertNoActiveSubscription(em: EntityManager, c: Checkout, customer: Customer | null): Promise<void> {
  if (!c.product.recurringInterval || !customer || !customer.id) return;
  const settings = c.organization.subscriptionSettings as { allow_multiple_subscriptions?: boolean };
  if (settings.allow_multiple_subscriptions) return;
  const active = await em.count(Subscription, {
    organization: c.organization.id,
    customer: customer.id,
    status: { $in: ACTIVE_SUBSCRIPTION_STATUSES },
    // An upgrade checkout replaces the subscription it names.
    ...(c.subscriptionId ? { id: { $ne: c.subscriptionId } } : {}),
  });
  if (active) throw AlreadyActiveSubscriptionError();
}

/** What confirmation needs beyond the update: email always; name and country with a payment form; a token to pay. */
export function requireConfirmFields(c: Checkout, tokenId: string | null | undefined): void {
  const issues: ValidationIssue[] = [];
  const missing = (field: string) => issues.push({ type: 'missing', loc: ['body', field], msg: 'Field required' });
  if (!c.customerEmail) missing('customer_email');
  if (c.isPaymentFormRequired) {
    if (!c.customerName) missing('customer_name');
    if (!c.customerBillingAddress?.country) missing('customer_billing_address');
  }
  if ((c.isPaymentRequired || c.isPaymentSetupRequired) && !tokenId) missing('confirmation_token_id');
  if (issues.length) throw new RequestValidationError(issues);
  // Required custom fields answered (and every answer still valid).
  c.customFieldData = validateCustomFieldData(c.product, c.customFieldData, true);
}
