/**
 * Checkout sessions: a buyer's attempt to buy one of a list of products of an organization, reached
 * through a capability URL (`client_secret`, `polar_c_…`). Amounts are integers in minor units of
 * `currency`, recomputed by the pricing module on every change; a free price has no amounts.
 */
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Discount } from '../discounts/entities.ts';
import { TRIAL_INTERVALS } from '../trials/intervals.ts';
import { Customer, type BillingAddress } from '../customers/entities.ts';
import type { ConfirmPaymentInput, ProcessorPaymentMethod } from '../payments/processor.ts';

export const CHECKOUT_STATUSES = ['open', 'expired', 'confirmed', 'succeeded', 'failed'] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** Answers to custom fields, by slug: strings (text, select, ISO dates), integers, booleans. */
export type CustomFieldData = Record<string, string | number | boolean | null>;

export const Checkout = defineEntity({
  name: 'Checkout',
  tableName: 'checkouts',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    status: p.enum(CHECKOUT_STATUSES).default('open'),
    /**
     * `polar_c_` + 256 random bits. A capability URL for the buyer (not a login credential), so stored
     * as is and looked up through its unique index.
     */
    clientSecret: p.string().unique(),
    expiresAt: p.datetime(),
    paymentProcessor: p.string().default('stripe'),
    paymentProcessorMetadata: p.json<Record<string, string>>(),
    /** The products the buyer may choose from, in the order given. */
    products: () => p.manyToMany(Product).pivotTable('checkout_products').fixedOrder(),
    /** The selected product and price. */
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    productPrice: () => p.manyToOne(ProductPrice).deleteRule('cascade').index(),
    /** Price amount (the requested one for a custom price); null for a free price, as every amount. */
    amount: p.integer().nullable(),
    discountAmount: p.integer().nullable(),
    /** amount − discount. */
    netAmount: p.integer().nullable(),
    taxAmount: p.integer().nullable(),
    /** net + tax. */
    totalAmount: p.integer().nullable(),
    currency: p.string().length(3).nullable(),
    isDiscountApplicable: p.boolean().default(false),
    isFreeProductPrice: p.boolean().default(false),
    isPaymentRequired: p.boolean().default(false),
    isPaymentSetupRequired: p.boolean().default(false),
    isPaymentFormRequired: p.boolean().default(false),
    discount: () => p.manyToOne(Discount).nullable().deleteRule('set null').index(),
    allowDiscountCodes: p.boolean().default(true),
    customFieldData: p.json<CustomFieldData>(),
    customer: () => p.manyToOne(Customer).nullable().deleteRule('set null').index(),
    customerExternalId: p.string().nullable(),
    customerName: p.string().nullable(),
    /** Lower-cased. */
    customerEmail: p.string().nullable(),
    customerIpAddress: p.string().nullable(),
    customerBillingAddress: p.json<BillingAddress>().nullable(),
    customerTaxId: p.string().nullable(),
    customerMetadata: p.json<Metadata>(),
    metadata: p.json<Metadata>(),
    successUrl: p.text().nullable(),
    embedOrigin: p.text().nullable(),
    /** A free subscription this checkout upgrades (checkouts/service.ts `upgradedSubscriptionCustomer`, orders/fulfilment.ts). */
    subscriptionId: p.uuid().nullable(),
    /** Set on confirmation: the processor's charge (null when nothing was charged). */
    processorChargeId: p.string().nullable(),
    /** Set on confirmation when the processor saved the card for later charges (recurring products). */
    processorPaymentMethod: p.json<ProcessorPaymentMethod>().nullable(),
    /**
     * Bumped each time a charge of this checkout was refunded without an order (a confirmation that
     * could not complete, a fulfilment that failed for good): part of the next charge's idempotency key,
     * so paying again, even with the same confirmation token, makes a new charge instead of replaying
     * the refunded one (confirm.ts `chargeKey`).
     */
    chargeAttempt: p.integer().default(0),
    /** The checkout's own trial (from its creation or its link), overriding the product's. */
    trialInterval: p.enum(TRIAL_INTERVALS).nullable(),
    trialIntervalCount: p.integer().nullable(),
    /** The trial it gives now (trials/index.ts `applyCheckoutTrial`): null without one. */
    activeTrialInterval: p.enum(TRIAL_INTERVALS).nullable(),
    activeTrialIntervalCount: p.integer().nullable(),
  },
  indexes: [
    {
      // The checkout-expiry sweeper's batch: the due open checkouts, earliest first (expireDueCheckouts).
      name: 'checkouts_open_expires_at_index',
      expression: `create index "checkouts_open_expires_at_index" on "checkouts" ("expires_at") where "status" = 'open'`,
    },
  ],
});
export type Checkout = InferEntity<typeof Checkout>;

/**
 * One reserved redemption of a discount by a checkout (unique per checkout). Reserved on confirmation
 * together with `discounts.redemptions_count`, under the discount's row lock; released (deleted,
 * count decremented) when the confirmation fails.
 */
export const DiscountRedemption = defineEntity({
  name: 'DiscountRedemption',
  tableName: 'discount_redemptions',
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    discount: () => p.manyToOne(Discount).deleteRule('cascade').index(),
    checkout: () => p.manyToOne(Checkout).deleteRule('cascade').unique(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
});
export type DiscountRedemption = InferEntity<typeof DiscountRedemption>;

/** What a checkout's charge asked the processor for: enough to ask again with the same idempotency key. */
export type ChargeRequest = ConfirmPaymentInput;

export const CHARGE_ATTEMPT_STATUSES = ['pending', 'declined', 'confirmed', 'refunding', 'refunded'] as const;

/**
 * One charge a confirmation asked the processor for, written before the call (confirm.ts `charge`):
 * `pending` until its outcome is known, then `declined`, `confirmed` (the checkout holds it) or
 * `refunded` (it will have no order). One left `pending` belongs to a confirmation that died between
 * the charge and its outcome; the checkout-expiry sweeper settles it (`settleAbandonedCharges`): asks
 * again with the same key and refunds what the checkout does not hold (`refunding` until the
 * processor has done it).
 */
export const CheckoutChargeAttempt = defineEntity({
  name: 'CheckoutChargeAttempt',
  tableName: 'checkout_charge_attempts',
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    checkout: () => p.manyToOne(Checkout).deleteRule('cascade').index(),
    idempotencyKey: p.string().unique(),
    request: p.json<ChargeRequest>(),
    status: p.enum(CHARGE_ATTEMPT_STATUSES).default('pending'),
    chargeId: p.string().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    settledAt: p.datetime().nullable(),
  },
  indexes: [
    {
      // The sweeper's question: the unsettled attempts, oldest first.
      name: 'checkout_charge_attempts_unsettled_index',
      expression: `create index "checkout_charge_attempts_unsettled_index" on "checkout_charge_attempts" ("created_at") where "status" in ('pending', 'refunding')`,
    },
  ],
});
export type CheckoutChargeAttempt = InferEntity<typeof CheckoutChargeAttempt>;
