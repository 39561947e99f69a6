/** Wire shapes of refunds, as `@polar-sh/sdk` 0.29.3 parses them (`Refund`, `RefundCreate`). */
import { z } from 'zod/v4';
import { metadataSchema, money } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import { REFUND_REASONS, REFUND_STATUSES, type Refund } from './entities.ts';

export const refundCreateSchema = z.object({
  order_id: z.uuid(),
  reason: z.enum(REFUND_REASONS),
  /** Tax excluded; its tax share is computed from the order. */
  amount: money().min(1),
  comment: z.string().max(1000).nullish(),
  revoke_benefits: z.boolean().default(false),
  metadata: metadataSchema.default({}),
});
export type RefundCreate = z.output<typeof refundCreateSchema>;

export const refundSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOutputSchema,
  status: z.enum(REFUND_STATUSES),
  reason: z.enum(REFUND_REASONS),
  amount: z.number().int(),
  tax_amount: z.number().int(),
  currency: z.string(),
  organization_id: z.uuid(),
  order_id: z.uuid(),
  subscription_id: z.uuid().nullable(),
  customer_id: z.uuid(),
  revoke_benefits: z.boolean(),
});
export type RefundOut = z.infer<typeof refundSchema>;

/** Relations are read by id only: nothing needs to be populated. */
export function serializeRefund(r: Refund): RefundOut {
  return {
    id: r.id,
    created_at: r.createdAt.toISOString(),
    modified_at: r.modifiedAt?.toISOString() ?? null,
    metadata: r.metadata,
    status: r.status,
    reason: r.reason,
    amount: r.amount,
    tax_amount: r.taxAmount,
    currency: r.currency,
    organization_id: r.organization.id,
    order_id: r.order.id,
    subscription_id: r.subscription?.id ?? null,
    customer_id: r.customer.id,
    revoke_benefits: r.revokeBenefits,
  };
}
