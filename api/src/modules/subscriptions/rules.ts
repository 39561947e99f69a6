/**
 * Subscription rules on the database: which statuses are billed and ended, the organization's
 * subscription settings, and the product a subscription may move to (`checkProductChange`). Whether a
 * cancel, uncancel, revoke or product change is allowed in the subscription's state is decided by
 * `refusalOf` (workflows/src/subscriptions/rules.ts), in the workflow's update validators;
 * `refusalError` applies it to a row, for a subscription whose workflow has ended.
 */
import { refusalOf, type SubscriptionUpdateName } from '@emporia/workflows/subscription-rules';
import type { EntityManager } from '../../kit/db.ts';
import { ApiError, fieldError } from '../../kit/errors.ts';
import { Product, type ProductPrice } from '../products/entities.ts';
import { ACTIVE_SUBSCRIPTION_STATUSES, CANCELLATION_REASONS, Subscription, type SubscriptionStatus } from './entities.ts';

export const AlreadyCanceledSubscription = (detail = 'This subscription is already canceled or will be at the end of the period.') =>
  new ApiError(403, 'AlreadyCanceledSubscription', detail);

export type CancellationReason = (typeof CANCELLATION_REASONS)[number];
export type ProrationBehavior = 'invoice' | 'prorate';

/** Statuses still billed (and renewed). */
export const BILLABLE_STATUSES: SubscriptionStatus[] = [...ACTIVE_SUBSCRIPTION_STATUSES, 'past_due'];

export interface SubscriptionSettings {
  allow_multiple_subscriptions: boolean;
  allow_customer_updates: boolean;
  proration_behavior: ProrationBehavior;
  /** Days an `unpaid` subscription keeps its benefits (Polar's `benefit_revocation_grace_period`). */
  benefit_revocation_grace_period: number;
}

export function subscriptionSettings(raw: Record<string, unknown> | null | undefined): SubscriptionSettings {
  const s = raw ?? {};
  return {
    allow_multiple_subscriptions: s.allow_multiple_subscriptions === true,
    allow_customer_updates: s.allow_customer_updates !== false,
    proration_behavior: s.proration_behavior === 'invoice' ? 'invoice' : 'prorate',
    benefit_revocation_grace_period:
      typeof s.benefit_revocation_grace_period === 'number' && s.benefit_revocation_grace_period > 0 ? s.benefit_revocation_grace_period : 0,
  };
}

const ENDED_STATUSES: SubscriptionStatus[] = ['canceled', 'unpaid', 'incomplete_expired'];
export const isEnded = (s: Pick<Subscription, 'endedAt' | 'status'>) => s.endedAt != null || ENDED_STATUSES.includes(s.status);
export const isBillable = (s: Subscription) => BILLABLE_STATUSES.includes(s.status) && !isEnded(s);

/** The rule's refusal of `update` for the subscription as its row stands, as the API answers it; null when allowed. */
export function refusalError(update: SubscriptionUpdateName, s: Subscription): ApiError | null {
  const r = refusalOf(update, { status: s.status, ended: isEnded(s), cancelAtPeriodEnd: s.cancelAtPeriodEnd });
  return r && new ApiError(r.status, r.type, r.message);
}

/** The product change: the subscription's state allows it (refusalOf), and the new product is a plain recurring one of the organization. */
export async function checkProductChange(em: EntityManager, s: Subscription, productId: string): Promise<{ product: Product; price: ProductPrice }> {
  const refused = refusalError('changeProduct', s);
  if (refused) throw refused;
  const loc = ['body', 'product_id'];
  const product = await em.findOne(Product, { id: productId, organization: s.organization.id }, { populate: ['prices'] });
  if (!product) throw fieldError(loc, 'Product does not exist.', 'value_error', productId);
  if (product.isArchived) throw fieldError(loc, 'Product is archived.', 'value_error', productId);
  if (!product.recurringInterval) throw fieldError(loc, 'Product is not recurring.', 'value_error', productId);
  const prices = product.prices.getItems().filter((p) => !p.isArchived);
  if (prices.some((p) => p.amountType === 'custom')) throw fieldError(loc, 'Pay-what-you-want products are not supported.', 'value_error', productId);
  const price = prices.find((p) => p.amountType === 'fixed') ?? prices.find((p) => p.amountType === 'free');
  if (!price) throw fieldError(loc, 'Product has no price to subscribe to.', 'value_error', productId);
  if (product.id === s.product.id && price.id === s.price.id) throw fieldError(loc, 'The subscription is already on this product.', 'value_error', productId);
  return { product, price };
}
