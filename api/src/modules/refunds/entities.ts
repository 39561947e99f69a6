/**
 * Refunds: money given back on one order, tax excluded from `amount` (its tax share is `taxAmount`),
 * both in minor units of the order's currency. A refund is created `pending` under the order's row
 * lock: the order's refunded amounts plus its pending refunds are what is held against its net
 * amount, so concurrent refunds can never exceed it. The `refund:<id>` workflow refunds at the processor,
 * then marks it `succeeded` (adding it to the order's refunded amounts) or `failed` (releasing it).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Customer } from '../customers/entities.ts';
import { Order } from '../orders/entities.ts';
import { Subscription } from '../subscriptions/entities.ts';

export const REFUND_STATUSES = ['pending', 'succeeded', 'failed', 'canceled'] as const;
export type RefundStatus = (typeof REFUND_STATUSES)[number];
export const REFUND_REASONS = [
  'duplicate', 'fraudulent', 'customer_request', 'service_disruption', 'satisfaction_guarantee', 'other',
] as const;
export type RefundReason = (typeof REFUND_REASONS)[number];

export const Refund = defineEntity({
  name: 'Refund',
  tableName: 'refunds',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    order: () => p.manyToOne(Order).deleteRule('cascade').index(),
    subscription: () => p.manyToOne(Subscription).nullable().deleteRule('set null').index(),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    status: p.enum(REFUND_STATUSES),
    reason: p.enum(REFUND_REASONS),
    amount: p.integer(),
    taxAmount: p.integer(),
    currency: p.string().length(3),
    comment: p.text().nullable(),
    revokeBenefits: p.boolean(),
    metadata: p.json<Metadata>(),
    /** The processor's refund id once refunded there. */
    processorRefundId: p.string().nullable(),
    /** Why the processor refused it (status `failed`). */
    failureReason: p.text().nullable(),
  },
});
export type Refund = InferEntity<typeof Refund>;
