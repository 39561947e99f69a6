/**
 * Wire shapes of subscriptions, as `@polar-sh/sdk` 0.29.3 parses them (`Subscription`,
 * `OrderSubscription`, `CustomerStateSubscription`): every key present, nullable as `null`.
 */
import { z } from 'zod/v4';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { customerSchema, serializeCustomer } from '../customers/schemas.ts';
import { priceSchema, productSchema, serializePrice, serializeProduct } from '../products/schemas.ts';
import { discountBaseSchema, serializeDiscountBase } from '../discounts/schemas.ts';
import { CANCELLATION_REASONS, SUBSCRIPTION_STATUSES, type Subscription } from './entities.ts';

const metadataOut = metadataOutputSchema;

/** Relations the read models read (product with PRODUCT_POPULATE). */
export const SUBSCRIPTION_POPULATE = [
  'customer',
  'price',
  'discount',
  'product.prices',
  'product.prices.meter',
  'product.productBenefits.benefit',
  'product.medias.file',
  'product.attachedCustomFields.customField',
] as const;

/** `{id, email, public_name}`: the deprecated user view of the customer. */
export const userOutSchema = z.object({ id: z.uuid(), email: z.string(), public_name: z.string() });
export function serializeUser(c: { id: string; email: string; name?: string | null }) {
  return { id: c.id, email: c.email, public_name: c.name || c.email.split('@')[0]! };
}

/** The subscription without embedded relations (`OrderSubscription`). */
export const subscriptionBaseSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOut,
  amount: z.number().int(),
  currency: z.string(),
  recurring_interval: z.enum(['month', 'year']),
  status: z.enum(SUBSCRIPTION_STATUSES),
  current_period_start: z.string(),
  current_period_end: z.string().nullable(),
  cancel_at_period_end: z.boolean(),
  canceled_at: z.string().nullable(),
  started_at: z.string().nullable(),
  ends_at: z.string().nullable(),
  ended_at: z.string().nullable(),
  trial_start: z.string().nullable(),
  trial_end: z.string().nullable(),
  customer_id: z.uuid(),
  product_id: z.uuid(),
  price_id: z.uuid(),
  discount_id: z.uuid().nullable(),
  checkout_id: z.uuid().nullable(),
  customer_cancellation_reason: z.enum(CANCELLATION_REASONS).nullable(),
  customer_cancellation_comment: z.string().nullable(),
  user_id: z.uuid(),
});
export type SubscriptionBaseOut = z.infer<typeof subscriptionBaseSchema>;

export const subscriptionSchema = subscriptionBaseSchema.extend({
  customer: customerSchema,
  user: userOutSchema,
  product: productSchema,
  price: priceSchema,
  discount: discountBaseSchema.nullable(),
});
export type SubscriptionOut = z.infer<typeof subscriptionSchema>;

const iso = (d: Date | null | undefined) => d?.toISOString() ?? null;

export function serializeSubscriptionBase(s: Subscription): SubscriptionBaseOut {
  return {
    id: s.id,
    created_at: s.createdAt.toISOString(),
    modified_at: iso(s.modifiedAt),
    metadata: s.metadata,
    amount: s.amount,
    currency: s.currency,
    recurring_interval: s.recurringInterval,
    status: s.status,
    current_period_start: s.currentPeriodStart.toISOString(),
    current_period_end: iso(s.currentPeriodEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: iso(s.canceledAt),
    started_at: iso(s.startedAt),
    ends_at: iso(s.endsAt),
    ended_at: iso(s.endedAt),
    trial_start: iso(s.trialStart),
    trial_end: iso(s.trialEnd),
    customer_id: s.customer.id,
    product_id: s.product.id,
    price_id: s.price.id,
    discount_id: s.discount?.id ?? null,
    checkout_id: s.checkout?.id ?? null,
    customer_cancellation_reason: s.customerCancellationReason ?? null,
    customer_cancellation_comment: s.customerCancellationComment ?? null,
    user_id: s.customer.id,
  };
}

/** Needs SUBSCRIPTION_POPULATE loaded. */
export function serializeSubscription(s: Subscription): SubscriptionOut {
  return {
    ...serializeSubscriptionBase(s),
    customer: serializeCustomer(s.customer),
    user: serializeUser(s.customer),
    product: serializeProduct(s.product) as SubscriptionOut['product'],
    price: serializePrice(s.price, s.product),
    discount: s.discount ? serializeDiscountBase(s.discount) : null,
  };
}

/** The customer-state view (`CustomerStateSubscription`); only for status `active` (the SDK's literal). */
export function serializeStateSubscription(s: Subscription): Record<string, unknown> {
  return {
    id: s.id,
    created_at: s.createdAt.toISOString(),
    modified_at: iso(s.modifiedAt),
    metadata: s.metadata,
    status: 'active',
    amount: s.amount,
    currency: s.currency,
    recurring_interval: s.recurringInterval,
    current_period_start: s.currentPeriodStart.toISOString(),
    current_period_end: iso(s.currentPeriodEnd),
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: iso(s.canceledAt),
    started_at: iso(s.startedAt),
    ends_at: iso(s.endsAt),
    product_id: s.product.id,
    price_id: s.price.id,
    discount_id: s.discount?.id ?? null,
  };
}
