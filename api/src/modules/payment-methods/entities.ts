/**
 * Saved payment methods of a customer: a card the processor keeps (`processorId`) for off-session
 * charges (renewals). Soft-deleted with `deletedAt`; at most one live default per customer.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Customer } from '../customers/entities.ts';

export const PaymentMethod = defineEntity({
  name: 'PaymentMethod',
  tableName: 'payment_methods',
  properties: {
    ...baseProperties,
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    /** `sandbox` | `stripe`: the processor that holds the card. */
    processor: p.string(),
    processorId: p.string(),
    type: p.string().default('card'),
    brand: p.string(),
    last4: p.string(),
    expMonth: p.integer(),
    expYear: p.integer(),
    wallet: p.string().nullable(),
    isDefault: p.boolean().default(false),
    deletedAt: p.datetime().nullable(),
  },
  uniques: [{ name: 'payment_methods_processor_id_unique', properties: ['processor', 'processorId'] }],
});
export type PaymentMethod = InferEntity<typeof PaymentMethod>;
