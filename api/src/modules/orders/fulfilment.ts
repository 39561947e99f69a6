/**
 * The fulfilment of a confirmed checkout, run by the `checkout-confirm:<checkout_id>` workflow:
 * `fulfilCheckout` saves the payment method, creates the order (and the subscription), grants the
 * benefits that need no third party and marks the checkout succeeded, all in one transaction;
 * `requestExternalGrants` and `markCheckoutSucceeded` finish a checkout with GitHub / Discord
 * benefits; `compensateCheckout` undoes the charge when the workflow fails for good. Idempotency rests
 * on unique constraints: one order and one subscription per checkout, one payment method per
 * processor id, one grant per (customer, benefit, order | subscription). The common checkout (a
 * one-time product with license-key or custom benefits) is fulfilled in plain SQL first
 * (fulfilment-sql.ts, the same rows and events); this is the path for everything else and for retries.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import type { Deps } from '../../deps.ts';
import { applyBenefitActionIn, grantNewIn, SHARED_ACCESS_TYPES } from '../benefits/grant-actions.ts';
import type { Integrations } from '../benefits/integrations.ts';
import { requestGrantAction } from '../benefits/lifecycle.ts';
import { Checkout } from '../checkouts/entities.ts';
import { CHECKOUT_ALIAS, CHECKOUT_POPULATE, serializeCheckout, serializeCheckoutWithProducts, type CheckoutProductsRead } from '../checkouts/schemas.ts';
import { emitCustomerStateChanged } from '../customers/service.ts';
import { PaymentMethod } from '../payment-methods/entities.ts';
import { savePaymentMethod } from '../payment-methods/service.ts';
import { periodEnd } from '../pricing/index.ts';
import { fulfilmentStart, grantsNotOnProduct } from './fulfilment-reads.ts';
import { fulfilCheckoutInSql } from './fulfilment-sql.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, Subscription } from '../subscriptions/entities.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription } from '../subscriptions/schemas.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { checkoutTrialPeriod } from '../trials/index.ts';
import { Order } from './entities.ts';
import { serializeOrderWithProduct } from './schemas.ts';
import { receiptOf, type Receipt } from './receipt.ts';

export interface OrderStepResult {
  orderId: string;
  subscriptionId: string | null;
}

/**
 * The order of a confirmed checkout (locked by the caller, no order yet), and its subscription for a
 * recurring product, in `tx`, not flushed: the caller flushes them with its other rows, then `emit`
 * writes their events (built from the flushed rows).
 */
async function createOrderIn(
  tx: EntityManager,
  c: Checkout,
  pm: PaymentMethod | null,
  read: CheckoutProductsRead,
): Promise<{ order: Order; previousProductId: string | null; emit: () => Promise<void> }> {
  const now = new Date();
  const interval = c.product.recurringInterval;
  const currency = c.currency ?? c.productPrice.priceCurrency;
  const discount = c.discount && c.isDiscountApplicable ? c.discount : null;

  let sub: Subscription | null = null;
  // An upgrade checkout (subscription_id) moves the customer's free subscription to what was bought,
  // with a new period from now; should it have ended meanwhile, the purchase starts a new one.
  const upgraded = interval && c.subscriptionId ? await tx.findOne(Subscription, { id: c.subscriptionId }, { lockMode: LockMode.PESSIMISTIC_WRITE }) : null;
  const previousProductId = upgraded && ACTIVE_SUBSCRIPTION_STATUSES.includes(upgraded.status) && !upgraded.endedAt && upgraded.customer.id === c.customer!.id
    ? upgraded.product.id
    : null;
  // A trial: the subscription starts `trialing`, its first period is the trial, nothing is charged now.
  const trial = interval && !previousProductId ? checkoutTrialPeriod(c, now) : null;
  if (interval) {
    // What the checkout bought, for a new subscription or the upgraded one alike: a period from now.
    const bought = {
      product: c.product,
      price: c.productPrice,
      discount,
      amount: c.netAmount ?? 0,
      currency,
      recurringInterval: interval,
      status: trial ? ('trialing' as const) : ('active' as const),
      currentPeriodStart: now,
      currentPeriodEnd: trial ? trial.end : periodEnd(now, interval),
      trialStart: trial?.start ?? null,
      trialEnd: trial?.end ?? null,
      cancelAtPeriodEnd: false,
      canceledAt: null,
      endsAt: null,
      customerCancellationReason: null,
      customerCancellationComment: null,
    };
    if (upgraded && previousProductId) {
      sub = tx.assign(upgraded, { ...bought, paymentMethod: pm ?? upgraded.paymentMethod, metadata: { ...upgraded.metadata, ...c.metadata } });
    } else {
      sub = tx.create(Subscription, {
        ...bought,
        organization: c.organization,
        customer: c.customer!,
        checkout: c,
        startedAt: now,
        endedAt: null,
        paymentMethod: pm,
        metadata: { ...c.metadata },
      });
    }
  }
  const total = trial ? 0 : (c.totalAmount ?? 0);
  const order = tx.create(Order, {
    organization: c.organization,
    customer: c.customer!,
    product: c.product,
    productPrice: c.productPrice,
    discount,
    subscription: sub,
    checkout: c,
    status: c.processorChargeId || total === 0 ? 'paid' : 'pending',
    billingReason: !interval ? 'purchase' : previousProductId ? 'subscription_update' : 'subscription_create',
    subtotalAmount: trial ? 0 : (c.amount ?? 0),
    discountAmount: trial ? 0 : (c.discountAmount ?? 0),
    netAmount: trial ? 0 : (c.netAmount ?? 0),
    taxAmount: trial ? 0 : (c.taxAmount ?? 0),
    totalAmount: total,
    refundedAmount: 0,
    refundedTaxAmount: 0,
    currency,
    billingAddress: c.customerBillingAddress ?? null,
    customFieldData: { ...c.customFieldData },
    metadata: { ...c.metadata },
    processorChargeId: c.processorChargeId ?? null,
  });
  const emit = async () => {
    const orgId = c.organization.id;
    if (sub) {
      await tx.populate(sub, SUBSCRIPTION_POPULATE);
      const data = serializeSubscription(sub);
      if (previousProductId) emitEvent(tx, orgId, 'subscription.updated', data);
      else {
        emitEvent(tx, orgId, 'subscription.created', data);
        // A trial becomes active with its first charge (subscriptions/service.ts).
        if (!trial) emitEvent(tx, orgId, 'subscription.active', data);
      }
    }
    // With the product's read model at hand, only what the order names directly (loaded with the checkout).
    await tx.populate(order, ['customer', 'productPrice.meter', 'discount', 'subscription']);
    const data = serializeOrderWithProduct(order, read.product);
    emitEvent(tx, orgId, 'order.created', data);
    if (order.status === 'paid') emitEvent(tx, orgId, 'order.paid', data);
  };
  return { order, previousProductId, emit };
}

/** What `fulfilCheckout` did, or an earlier attempt of it had done. */
export interface FulfilResult extends OrderStepResult {
  customerId: string;
  productId: string;
  /**
   * Benefits granted through their benefit-grant workflows (third-party access: GitHub, Discord),
   * still to request; the checkout succeeds after that (`succeeded` false). Empty once succeeded.
   */
  externalBenefitIds: string[];
  /**
   * An upgrade checkout: the third-party benefits the subscription still grants that the bought
   * product does not have, to revoke through their workflows (the first-party ones were revoked in
   * the transaction). Answered again by a retry until the checkout has succeeded.
   */
  externalRevokeBenefitIds?: string[];
  /** An upgrade checkout moved an existing subscription (its workflow must re-read its period). */
  upgraded?: boolean;
  /** The checkout is `succeeded`. */
  succeeded: boolean;
  /** This call created the order (no earlier attempt had committed it), so no receipt was mailed for it yet. */
  created?: boolean;
  receipt: Receipt | null;
}

/**
 * The fulfilment of a confirmed checkout in ONE transaction (issue #5): the saved payment method, the
 * order (and subscription), the grant of every benefit that needs no third party (license keys,
 * files, custom notes, meter credits: benefits/grant-actions.ts, the same code the benefit-grant
 * workflows run), the checkout `succeeded`, and their events with one customer.state_changed. A crash
 * or failure anywhere leaves nothing written; a retry after commit finds the order and answers what
 * was done. Third-party benefits are left to the workflow (`externalBenefitIds`): their calls do not
 * belong in a transaction, so the checkout stays `confirmed` until they are requested.
 */
export async function fulfilCheckout(
  em: EntityManager,
  integrations: Integrations,
  checkoutId: string,
  opts: { processor: string; publicUrl: string; beforeCommit?: () => void },
): Promise<FulfilResult | null> {
  // The common checkout in plain SQL (fulfilment-sql.ts); anything else, and a retry, below.
  const plain = await fulfilCheckoutInSql(em, checkoutId, opts);
  if (plain) return plain;
  return em.transactional(async (tx) => {
    // The row and what the order copies from it in one statement, locking the checkout's row only.
    const c = await tx.findOne(
      Checkout,
      { id: checkoutId },
      {
        lockMode: LockMode.PESSIMISTIC_WRITE,
        lockTableAliases: [CHECKOUT_ALIAS],
        populate: ['product', 'productPrice.meter', 'discount', 'customer', 'organization'],
      },
    );
    if (!c?.customer || (c.status !== 'confirmed' && c.status !== 'succeeded')) return null;
    const { existingOrderId, links, benefits, read } = await fulfilmentStart(tx, c);
    const external = links.filter((l) => SHARED_ACCESS_TYPES.has(l.type)).map((l) => l.benefit_id);
    // Usually there is none: the order and its graph are loaded only when a retry finds one.
    const existing = existingOrderId ? await tx.findOneOrFail(Order, { id: existingOrderId }, { populate: ['customer', 'product', 'organization'] }) : null;
    if (existing) {
      const succeeded = c.status === 'succeeded';
      const subscriptionId = existing.subscription?.id ?? null;
      return {
        orderId: existing.id,
        subscriptionId,
        customerId: c.customer.id,
        productId: c.product.id,
        externalBenefitIds: succeeded ? [] : external,
        // A retry of an upgrade that committed but did not get to queue its revocations: what the
        // subscription still grants of a third party and the bought product does not have.
        externalRevokeBenefitIds:
          !succeeded && subscriptionId && existing.billingReason === 'subscription_update'
            ? (await grantsNotOnProduct(tx, subscriptionId, c.customer.id, links)).filter((g) => SHARED_ACCESS_TYPES.has(g.type)).map((g) => g.benefit_id)
            : [],
        succeeded,
        receipt: receiptOf(existing),
      };
    }
    if (c.status !== 'confirmed') return null;
    const pm = c.processorPaymentMethod
      ? await savePaymentMethod(tx, { customerId: c.customer.id, processor: opts.processor, method: c.processorPaymentMethod })
      : null;
    const { order, previousProductId, emit } = await createOrderIn(tx, c, pm, read);
    const scope = { orderId: order.id, subscriptionId: order.subscription?.id ?? null, customerId: c.customer.id, productId: c.product.id };
    const grantEvents: (() => void)[] = [];
    if (previousProductId) {
      // The upgraded subscription has grants already: each benefit through the grant code's lookup.
      await tx.flush();
      await emit();
      for (const link of links) {
        if (SHARED_ACCESS_TYPES.has(link.type)) continue;
        await applyBenefitActionIn(
          tx,
          integrations,
          { action: 'grant', benefitId: link.benefit_id, customerId: scope.customerId, subscriptionId: scope.subscriptionId, orderId: scope.orderId },
          { stateChanged: false },
        );
      }
    } else {
      // A new order (and subscription) has no grant yet: created without a lookup, flushed below with the order.
      for (const link of links) {
        if (SHARED_ACCESS_TYPES.has(link.type)) continue;
        const granted = await grantNewIn(tx, integrations, { benefit: benefits.get(link.benefit_id)!, customer: c.customer, subscriptionId: scope.subscriptionId, orderId: scope.orderId });
        grantEvents.push(granted.emit);
      }
    }
    const externalRevocations: string[] = [];
    if (previousProductId && scope.subscriptionId) {
      // The upgraded subscription no longer grants what only its previous product had: first-party
      // grants are revoked here, third-party ones through their workflows (`requestExternalGrants`).
      for (const old of await grantsNotOnProduct(tx, scope.subscriptionId, scope.customerId, links)) {
        if (SHARED_ACCESS_TYPES.has(old.type)) externalRevocations.push(old.benefit_id);
        else {
          await applyBenefitActionIn(tx, integrations, {
            action: 'revoke',
            benefitId: old.benefit_id,
            customerId: scope.customerId,
            subscriptionId: scope.subscriptionId,
            orderId: scope.orderId,
          });
        }
      }
    }
    const succeeded = external.length === 0 && externalRevocations.length === 0;
    if (succeeded) c.status = 'succeeded';
    // One flush for the order, its subscription, the grants and their license keys, and the checkout.
    await tx.flush();
    // Their events, in the order they were written before (built from the flushed rows), then the
    // checkout's and the customer's state, which reads the grants: one INSERT of the outbox.
    if (!previousProductId) {
      await emit();
      for (const emitGrant of grantEvents) emitGrant();
    }
    if (succeeded) emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckoutWithProducts(c, opts.publicUrl, read));
    await emitCustomerStateChanged(tx, c.organization.id, c.customer);
    await tx.flush();
    opts.beforeCommit?.();
    return {
      ...scope,
      externalBenefitIds: external,
      externalRevokeBenefitIds: externalRevocations,
      upgraded: previousProductId !== null,
      succeeded,
      created: true,
      receipt: receiptOf(order),
    };
  });
}

/** Requests the grant of third-party benefits from their benefit-grant workflows (after `fulfilCheckout`). */
export async function requestExternalGrants(deps: Deps, scope: FulfilResult): Promise<void> {
  for (const benefitId of scope.externalRevokeBenefitIds ?? []) {
    await requestGrantAction(deps, benefitId, scope.customerId, { action: 'revoke', subscriptionId: scope.subscriptionId, orderId: scope.orderId });
  }
  for (const benefitId of scope.externalBenefitIds) {
    await requestGrantAction(deps, benefitId, scope.customerId, {
      action: 'grant',
      subscriptionId: scope.subscriptionId,
      orderId: scope.orderId,
      guard: { productId: scope.productId, has: true },
    });
  }
}

/** Step 4: checkout `succeeded`, with checkout.updated and customer.state_changed. Idempotent. */
export async function markCheckoutSucceeded(em: EntityManager, checkoutId: string, publicUrl: string): Promise<void> {
  await em.transactional(async (tx) => {
    const c = await tx.findOne(Checkout, { id: checkoutId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!c || c.status !== 'confirmed') return;
    c.status = 'succeeded';
    await tx.flush();
    await tx.populate(c, CHECKOUT_POPULATE);
    emitEvent(tx, c.organization.id, 'checkout.updated', serializeCheckout(c, publicUrl));
    if (c.customer) {
      await emitCustomerStateChanged(tx, c.organization.id, c.customer);
    }
    await tx.flush();
  });
}
