/**
 * Subscriptions: a customer's recurring purchase of a product at a price. Amounts in minor units of
 * `currency`. One subscription per checkout (unique `checkout_id`), which makes the checkout
 * workflow's "create the subscription" step idempotent.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Discount } from '../discounts/entities.ts';
import { Customer } from '../customers/entities.ts';
import { Checkout } from '../checkouts/entities.ts';
import { PaymentMethod } from '../payment-methods/entities.ts';

export const SUBSCRIPTION_STATUSES = ['incomplete', 'incomplete_expired', 'trialing', 'active', 'past_due', 'canceled', 'unpaid'] as const;
export type SubscriptionStatus = (typeof SUBSCRIPTION_STATUSES)[number];
/** Statuses in which the customer has the product (and its benefits). */
export const ACTIVE_SUBSCRIPTION_STATUSES: SubscriptionStatus[] = ['trialing', 'active'];
export const CANCELLATION_REASONS = [
  'customer_service', 'low_quality', 'missing_features', 'switched_service', 'too_complex', 'too_expensive', 'unused', 'other',
] as const;

export const Subscription = defineEntity({
  name: 'Subscription',
  tableName: 'subscriptions',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    price: () => p.manyToOne(ProductPrice).deleteRule('cascade').index(),
    discount: () => p.manyToOne(Discount).nullable().deleteRule('set null').index(),
    checkout: () => p.manyToOne(Checkout).nullable().deleteRule('set null').unique(),
    amount: p.integer(),
    currency: p.string().length(3),
    recurringInterval: p.enum(['month', 'year'] as const),
    status: p.enum(SUBSCRIPTION_STATUSES),
    currentPeriodStart: p.datetime(),
    currentPeriodEnd: p.datetime().nullable(),
    cancelAtPeriodEnd: p.boolean().default(false),
    canceledAt: p.datetime().nullable(),
    startedAt: p.datetime().nullable(),
    endsAt: p.datetime().nullable(),
    endedAt: p.datetime().nullable(),
    customerCancellationReason: p.enum(CANCELLATION_REASONS).nullable(),
    customerCancellationComment: p.text().nullable(),
    paymentMethod: () => p.manyToOne(PaymentMethod).nullable().deleteRule('set null').index(),
    /**
     * Proration carried to the next cycle's order (`proration_behavior: prorate`, or an `invoice`
     * change whose difference was a credit): positive = owed by the customer, negative = credit.
     */
    pendingProrationAmount: p.integer().default(0),
    /** The trial this subscription started with (its first period); null without one. */
    trialStart: p.datetime().nullable(),
    trialEnd: p.datetime().nullable(),
    metadata: p.json<Metadata>(),
  },
  indexes: [
    {
      // The seller's list in its default order (latest started first, then id): a page is read in index order.
      name: 'subscriptions_organization_started_at_id_index',
      expression:
        'create index "subscriptions_organization_started_at_id_index" on "subscriptions" ("organization_id", "started_at" desc, "id")',
    },
  ],
});
export type Subscription = InferEntity<typeof Subscription>;
