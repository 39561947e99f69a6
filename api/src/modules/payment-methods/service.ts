/** Saved payment methods. Services never commit on their own, except the workflow steps that say so. */
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '../../kit/db.ts';
import { Customer } from '../customers/entities.ts';
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
  await em.findOne(Customer, { id: input.customerId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
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
