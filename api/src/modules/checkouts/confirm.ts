/**
 * Checkout confirmation (`POST /v1/checkouts/client/{client_secret}/confirm`): in one transaction
 * with the checkout row locked (FOR UPDATE NOWAIT), apply the buyer's last changes, check what the
 * checkout needs, reserve the discount redemption, find or create the customer, charge the card and
 * mark the checkout `confirmed`. The order, subscription and benefits follow in the
 * `checkout-confirm:<id>` workflow, started after commit.
 *
 * Charging inside the transaction: the charge is an external side effect that a rollback cannot
 * undo. A decline rolls everything back (the checkout stays open, the redemption is released, no
 * customer is written). A crash between a successful charge and the commit would leave a charge
 * without a confirmed checkout; the charge's idempotency key (`checkout:<id>:charge:<token>`) makes
 * the buyer's retry replay that same charge instead of charging twice, and the retry then commits.
 * The token is part of the key because a declined attempt is replayed for its key too (as Stripe
 * does): the buyer's next card must get a fresh attempt.
 *
 * Holding the row lock across the processor call means a confirm in flight needs two database
 * connections when the processor is the sandbox (which stores its charges in the same database).
 */
import { LockMode, UniqueConstraintViolationException } from '@mikro-orm/core';
import type { MikroORM } from '@mikro-orm/postgresql';
import { z } from 'zod/v4';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, RequestValidationError, ResourceAlreadyExists, ResourceNotFound, fieldError, type ValidationIssue } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { emitCustomerEvent } from '../customers/service.ts';
import { createCustomerSession } from '../customer-sessions/service.ts';
import { Discount } from '../discounts/entities.ts';
import { Organization } from '../organizations/entities.ts';
import { createProcessor, type PaymentProcessor } from '../payments/index.ts';
import { ProcessorError, type ProcessorPaymentMethod } from '../payments/processor.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from '../subscriptions/entities.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Checkout, DiscountRedemption } from './entities.ts';
import { checkoutPublicSchema, checkoutUpdatePublicSchema, effectiveStatus, serializeCheckout } from './schemas.ts';
import { CHECKOUT_POPULATE, CHECKOUT_SECRET_PREFIX, NotOpenCheckout, notRedeemable, updateCheckout, validateCustomFieldData } from './service.ts';

export const PaymentError = (detail: string) => new ApiError(400, 'PaymentError', detail);
export const AlreadyActiveSubscriptionError = (detail = 'You already have an active subscription.') =>
  new ApiError(403, 'AlreadyActiveSubscriptionError', detail);

export const checkoutConfirmSchema = checkoutUpdatePublicSchema.extend({
  confirmation_token_id: z.string().trim().min(1).max(255).nullish(),
});
export type CheckoutConfirm = z.output<typeof checkoutConfirmSchema>;

export const checkoutConfirmedSchema = checkoutPublicSchema.extend({ customer_session_token: z.string() });

const processors = new WeakMap<MikroORM, PaymentProcessor>();
/** One processor per ORM (the sandbox keeps its state in that database). */
export function processorFor(cfg: Config, orm: MikroORM): PaymentProcessor {
  let p = processors.get(orm);
  if (!p) {
    p = createProcessor(cfg, orm);
    processors.set(orm, p);
  }
  return p;
}

/** PostgreSQL's lock_not_available (FOR UPDATE NOWAIT on a row another transaction holds). */
function isLockNotAvailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string } | null;
  return e?.code === '55P03' || /could not obtain lock/i.test(String(e?.message ?? ''));
}

async function lockCheckoutBySecret(em: EntityManager, clientSecret: string): Promise<Checkout> {
  let c: Checkout | null = null;
  if (clientSecret.startsWith(CHECKOUT_SECRET_PREFIX)) {
    try {
      c = await em.findOne(Checkout, { clientSecret }, { lockMode: LockMode.PESSIMISTIC_WRITE_OR_FAIL });
    } catch (err) {
      if (isLockNotAvailable(err)) throw ResourceAlreadyExists('This checkout is already being confirmed.');
      throw err;
    }
  }
  if (!c || effectiveStatus(c) === 'expired') throw ResourceNotFound('Checkout not found');
  await em.populate(c, CHECKOUT_POPULATE);
  return c;
}

/** What confirmation needs beyond the update: email always; name and country with a payment form; a token to pay. */
function requireConfirmFields(c: Checkout, tokenId: string | null | undefined): void {
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

/**
 * Reserves one redemption of the checkout's discount under the discount's row lock: a discount at
 * its max_redemptions (or otherwise not redeemable) is a 422 on `body.discount_id`. Rolled back with
 * the confirmation's transaction.
 */
async function reserveRedemption(em: EntityManager, c: Checkout): Promise<void> {
  if (!c.discount || !c.isDiscountApplicable) return;
  const d = await em.findOne(Discount, { id: c.discount.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  const why = d ? notRedeemable(d) : 'Discount does not exist.';
  if (!d || why) throw fieldError(['body', 'discount_id'], why!, 'value_error', c.discount.id);
  d.redemptionsCount += 1;
  em.create(DiscountRedemption, { discount: d, checkout: c });
}

/** Releases a reserved redemption (compensation after a confirmed checkout fails). Idempotent. */
export async function releaseRedemption(em: EntityManager, checkoutId: string): Promise<boolean> {
  const r = await em.findOne(DiscountRedemption, { checkout: checkoutId });
  if (!r) return false;
  const d = await em.findOne(Discount, { id: r.discount.id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (d) d.redemptionsCount = Math.max(0, d.redemptionsCount - 1);
  em.remove(r);
  await em.flush();
  return true;
}

async function findOrCreateCustomer(em: EntityManager, c: Checkout): Promise<{ customer: Customer; created: boolean }> {
  const organizationId = c.organization.id;
  const email = c.customerEmail!;
  const existing =
    c.customer && !c.customer.deletedAt && c.customer.email === email
      ? c.customer
      : await em.findOne(Customer, { organization: organizationId, email, deletedAt: null });
  if (existing) {
    if (!existing.name && c.customerName) existing.name = c.customerName;
    if (!existing.billingAddress && c.customerBillingAddress) existing.billingAddress = c.customerBillingAddress;
    return { customer: existing, created: false };
  }
  const customer = em.create(Customer, {
    organization: em.getReference(Organization, organizationId),
    email,
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
  return { customer, created: true };
}

/** One active (or trialing) subscription per customer and organization, unless the organization allows several. */
async function assertNoActiveSubscription(em: EntityManager, c: Checkout, customer: Customer, created: boolean): Promise<void> {
  if (!c.product.recurringInterval || created) return;
  const settings = c.organization.subscriptionSettings as { allow_multiple_subscriptions?: boolean };
  if (settings.allow_multiple_subscriptions) return;
  const active = await em.count(Subscription, {
    organization: c.organization.id,
    customer: customer.id,
    status: { $in: ACTIVE_SUBSCRIPTION_STATUSES },
  });
  if (active) throw AlreadyActiveSubscriptionError();
}

export interface ConfirmDeps {
  cfg: Config;
  orm: MikroORM;
}

/**
 * Confirms the checkout in the caller's transaction (`tx`): see the file comment. Returns the
 * confirmed checkout and the customer session token (shown once). Flushes.
 */
export async function confirmCheckout(
  tx: EntityManager,
  deps: ConfirmDeps,
  clientSecret: string,
  input: CheckoutConfirm,
): Promise<{ checkout: Checkout; customerSessionToken: string; customerCreated: Customer | null }> {
  const c = await lockCheckoutBySecret(tx, clientSecret);
  if (c.status !== 'open') throw NotOpenCheckout(`Checkout is ${effectiveStatus(c)}.`);
  const { confirmation_token_id: tokenId, ...update } = input;
  await updateCheckout(tx, c, update, 'public');
  requireConfirmFields(c, tokenId);

  const { customer, created } = await findOrCreateCustomer(tx, c);
  await assertNoActiveSubscription(tx, c, customer, created);
  await reserveRedemption(tx, c);
  try {
    await tx.flush();
  } catch (err) {
    // Another checkout created the same customer a moment ago: the buyer can simply retry.
    if (err instanceof UniqueConstraintViolationException) throw ResourceAlreadyExists('A concurrent checkout is creating this customer; retry.');
    throw err;
  }

  const processor = processorFor(deps.cfg, deps.orm);
  let chargeId: string | null = null;
  let savedMethod: ProcessorPaymentMethod | null = null;
  const recurring = c.product.recurringInterval != null;
  try {
    if (c.isPaymentRequired || c.isPaymentSetupRequired) {
      if (!customer.processorCustomerId) {
        const pc = await processor.createCustomer({
          email: customer.email,
          name: customer.name ?? null,
          idempotencyKey: `checkout:${c.id}:customer:${customer.email}`,
        });
        customer.processorCustomerId = pc.id;
      }
      if (c.isPaymentRequired) {
        const result = await processor.confirmPayment({
          amount: c.totalAmount!,
          currency: c.currency!,
          confirmationTokenId: tokenId!,
          processorCustomerId: customer.processorCustomerId,
          savePaymentMethod: recurring,
          idempotencyKey: `checkout:${c.id}:charge:${tokenId}`,
          metadata: { checkout_id: c.id },
        });
        if (result.status === 'declined') throw PaymentError(result.message);
        chargeId = result.chargeId;
        if (recurring) savedMethod = result.paymentMethod;
      } else {
        const result = await processor.setupPaymentMethod({
          confirmationTokenId: tokenId!,
          processorCustomerId: customer.processorCustomerId,
          idempotencyKey: `checkout:${c.id}:setup:${tokenId}`,
        });
        if (result.status === 'declined') throw PaymentError(result.message);
        savedMethod = result.paymentMethod;
      }
    }
  } catch (err) {
    if (err instanceof ProcessorError) throw PaymentError(err.message);
    throw err;
  }

  c.status = 'confirmed';
  c.customer = customer;
  c.processorChargeId = chargeId;
  c.processorPaymentMethod = savedMethod;
  const { token } = createCustomerSession(tx, customer);
  await tx.flush();
  emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, deps.cfg.PUBLIC_URL));
  if (created) emitCustomerEvent(tx, customer, 'created');
  await tx.flush();
  return { checkout: c, customerSessionToken: token, customerCreated: created ? customer : null };
}
