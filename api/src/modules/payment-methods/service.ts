/** Saved payment methods. Services never commit on their own, except the workflow steps that say so. */
import { findAndCountInOneSnapshot, type EntityManager } from '../../kit/db.ts';
import { ApiError } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { Subscription } from '../subscriptions/entities.ts';
import type { ProcessorPaymentMethod } from '../payments/processor.ts';
import { PaymentMethod } from './entities.ts';

/**
 * Records a card the processor saved for `customer` (idempotent by processor + processor id). The
 * first live method of a customer becomes the default. Decided under the customer's row lock.
 */
export async function savePaymentMethod(
  em: EntityManager,
  input: { customerId: string; processor: string; method: ProcessorPaymentMethod },
): Promise<PaymentMethod> {
  const existing = await em.findOne(PaymentMethod, { processor: input.processor, processorId: input.method.id });
  if (existing) return existing;
  await lockCustomerRow(em, input.customerId);
  const hasDefault = await em.count(PaymentMethod, { customer: input.customerId, isDefault: true, deletedAt: null });
  const pm = em.create(PaymentMethod, {
    customer: em.getReference(Customer, input.customerId),
    processor: input.processor,
    processorId: input.method.id,
    type: 'card',
    brand: input.method.brand,
    last4: input.method.last4,
    expMonth: input.method.expMonth,
    expYear: input.method.expYear,
    wallet: input.method.wallet ?? null,
    isDefault: hasDefault === 0,
    deletedAt: null,
  });
  await em.flush();
  return pm;
}

/** The customer's live payment methods, the default first, then newest first. */
export function listPaymentMethods(
  em: EntityManager,
  customerId: string,
  page: { limit: number; offset: number },
): Promise<[PaymentMethod[], number]> {
  return findAndCountInOneSnapshot(
    em,
    PaymentMethod,
    { customer: customerId, deletedAt: null },
    { orderBy: [{ isDefault: 'desc' }, { createdAt: 'desc' }, { id: 'asc' }], ...page },
  );
}

/** Makes `pm` the customer's only live default (customer row lock held by the caller). */
export async function setDefaultPaymentMethod(em: EntityManager, pm: PaymentMethod): Promise<void> {
  const others = await em.find(PaymentMethod, { customer: pm.customer.id, isDefault: true, deletedAt: null, id: { $ne: pm.id } });
  for (const o of others) o.isDefault = false;
  pm.isDefault = true;
}

export const PaymentMethodInUse = () =>
  new ApiError(
    400,
    'PaymentMethodInUseByActiveSubscription',
    'This is your only payment method and an active subscription renews with it: add another one first.',
  );

/**
 * Soft-deletes a live payment method of the customer (null when there is none by that id). When it
 * was the default, the newest remaining method becomes the default. The last method of a customer
 * whose paid subscriptions still renew cannot go (400). Customer row lock held here.
 */
export async function deletePaymentMethod(em: EntityManager, customerId: string, id: string): Promise<PaymentMethod | null> {
  await lockCustomerRow(em, customerId);
  const pm = await em.findOne(PaymentMethod, { id, customer: customerId, deletedAt: null });
  if (!pm) return null;
  const others = await em.count(PaymentMethod, { customer: customerId, deletedAt: null, id: { $ne: pm.id } });
  if (others === 0) {
    const renewing = await em.count(Subscription, {
      customer: customerId,
      status: { $in: ['trialing', 'active', 'past_due'] },
      cancelAtPeriodEnd: false,
      amount: { $gt: 0 },
    });
    if (renewing > 0) throw PaymentMethodInUse();
  }
  pm.deletedAt = new Date();
  if (pm.isDefault) {
    pm.isDefault = false;
    const next = await em.findOne(
      PaymentMethod,
      { customer: customerId, deletedAt: null, id: { $ne: pm.id } },
      { orderBy: [{ createdAt: 'desc' }, { id: 'asc' }] },
    );
    if (next) next.isDefault = true;
  }
  return pm;
}

/**
 * Serializes a customer's payment-method changes. FOR NO KEY UPDATE, not FOR UPDATE: the latter also
 * waits for (and deadlocks with) every transaction inserting a row that references the customer
 * (an order, a subscription, a grant hold key-share locks on it).
 */
export async function lockCustomerRow(em: EntityManager, customerId: string): Promise<void> {
  await em.execute(`select 1 from "customers" where "id" = ? for no key update`, [customerId]);
}
