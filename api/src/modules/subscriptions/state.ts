/**
 * What every subscription write shares: the row under its lock, its amounts (price, discount, tax),
 * the orders it creates, its webhook events and the benefit scope the workflow grants or revokes.
 * Every function here works inside the caller's transaction.
 */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { Customer } from '../customers/entities.ts';
import { emitCustomerStateChanged } from '../customers/service.ts';
import type { Discount } from '../discounts/entities.ts';
import { Order } from '../orders/entities.ts';
import { ORDER_POPULATE, serializeOrder } from '../orders/schemas.ts';
import { cycleAmounts } from '../pricing/index.ts';
import { discountDuration, discountTerms, taxBasisPoints } from '../pricing/terms.ts';
import type { ProductPrice } from '../products/entities.ts';
import { emitEvent, type WebhookEventType } from '../webhooks/outbox.ts';
import { Subscription } from './entities.ts';
import { SUBSCRIPTION_POPULATE, serializeSubscription } from './schemas.ts';

/**
 * The subscription under its row lock, with what its webhook payloads read (SUBSCRIPTION_POPULATE, and
 * the organization unless `organization: false`): the row and its to-one relations in one statement
 * that locks only the subscription's row (`FOR UPDATE OF` its alias: never the product or customer rows
 * that other subscriptions share), then the product's collections, one statement each.
 */
export async function lockSubscription(tx: EntityManager, id: string, opts: { organization?: boolean } = {}): Promise<Subscription | null> {
  const s = await tx.findOne(
    Subscription,
    { id },
    {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      lockTableAliases: [SUBSCRIPTION_ALIAS],
      populate: opts.organization === false ? ['customer', 'price', 'discount', 'product'] : ['customer', 'price', 'discount', 'product', 'organization'],
    },
  );
  if (s) await tx.populate(s, SUBSCRIPTION_POPULATE, { refresh: false });
  return s;
}

/** The alias MikroORM gives the root table of a `Subscription` query (the default naming strategy's `s0`). */
const SUBSCRIPTION_ALIAS = 's0';

export async function emitSubscription(tx: EntityManager, s: Subscription, types: WebhookEventType[], stateChanged: boolean): Promise<void> {
  await tx.flush();
  await tx.populate(s, SUBSCRIPTION_POPULATE, { refresh: false });
  const data = serializeSubscription(s);
  for (const t of types) emitEvent(tx, s.organization.id, t, data);
  if (stateChanged) {
    const customer = await tx.findOneOrFail(Customer, { id: s.customer.id });
    await emitCustomerStateChanged(tx, s.organization.id, customer);
  }
  await tx.flush();
}

export async function emitOrder(tx: EntityManager, o: Order, types: WebhookEventType[]): Promise<void> {
  await tx.flush();
  // What the transaction already loaded (the renewal's subscription graph) is not read again.
  await tx.populate(o, ORDER_POPULATE, { refresh: false });
  const data = serializeOrder(o);
  for (const t of types) emitEvent(tx, o.organization.id, t, data);
  await tx.flush();
}

export async function discountAppliesToProduct(em: EntityManager, d: Discount, productId: string): Promise<boolean> {
  if (d.deletedAt) return false;
  await em.populate(d, ['products']);
  const products = d.products.getItems();
  return !products.length || products.some((p) => p.id === productId);
}

/** The tax rate of the subscription's billing country. */
export const subscriptionTaxBasisPoints = (em: EntityManager, s: Subscription) => taxBasisPoints(em, s.organization.id, s.customer.billingAddress?.country);

export const priceAmountOf = (price: Pick<ProductPrice, 'amountType' | 'priceAmount'>) => (price.amountType === 'fixed' ? (price.priceAmount ?? 0) : 0);

/** What the customer pays per period for `price` with the subscription's discount, if it still applies now. */
export async function recurringAmount(em: EntityManager, s: Subscription, price: ProductPrice, productId: string, periodStart: Date): Promise<number> {
  const d = s.discount && (await discountAppliesToProduct(em, s.discount, productId)) ? s.discount : null;
  return cycleAmounts({
    priceAmount: priceAmountOf(price),
    discount: d ? { terms: discountTerms(d), duration: discountDuration(d), appliedAt: s.startedAt ?? s.createdAt } : null,
    periodStart,
    isFirstPeriod: (s.startedAt ?? s.createdAt).getTime() === periodStart.getTime(),
    proration: 0,
  }).net;
}

export interface BenefitScopeOut {
  customerId: string;
  productId: string;
  subscriptionId: string | null;
  orderId: string | null;
}

export const scopeOf = (s: Subscription, orderId: string | null = null, productId = s.product.id): BenefitScopeOut => ({
  customerId: s.customer.id,
  productId,
  subscriptionId: s.id,
  orderId,
});

type OrderFields = Pick<
  Order,
  'product' | 'productPrice' | 'discount' | 'status' | 'billingReason' | 'subtotalAmount' | 'discountAmount' | 'netAmount' | 'taxAmount' | 'totalAmount'
> & { lines?: Order['lines'] };

/** A new order of the subscription (its organization, customer, currency and billing address), not yet charged. */
export function subscriptionOrder(tx: EntityManager, s: Subscription, fields: OrderFields): Order {
  return tx.create(Order, {
    organization: s.organization,
    customer: s.customer,
    subscription: s,
    checkout: null,
    refundedAmount: 0,
    refundedTaxAmount: 0,
    currency: s.currency,
    billingAddress: s.customer.billingAddress ?? null,
    customFieldData: {},
    metadata: {},
    processorChargeId: null,
    ...fields,
  });
}
