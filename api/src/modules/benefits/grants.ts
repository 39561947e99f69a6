/**
 * Benefit grants: one row per (customer, benefit, subscription or order) recording that the customer
 * holds (or held) the benefit. Granted grants have `grantedAt`; revoking clears it and sets
 * `revokedAt`; granting again does the reverse. Orders and subscriptions come in later issues, so
 * their ids are plain uuid columns for now.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { baseProperties } from '../../kit/entity.ts';
import { Customer } from '../customers/entities.ts';
import { Benefit, BENEFIT_TYPES } from './entities.ts';
import { customerSchema, serializeCustomer } from '../customers/schemas.ts';

export const BenefitGrant = defineEntity({
  name: 'BenefitGrant',
  tableName: 'benefit_grants',
  properties: {
    ...baseProperties,
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    benefit: () => p.manyToOne(Benefit).deleteRule('cascade').index(),
    subscriptionId: p.uuid().nullable().index(),
    orderId: p.uuid().nullable().index(),
    grantedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    /** What the grant produced (license key id and display key, granted files, ...). */
    properties: p.json<Record<string, unknown>>(),
  },
  indexes: [
    {
      // One grant per customer, benefit and origin; a null origin counts as a value.
      name: 'benefit_grants_scope_unique',
      expression:
        'create unique index "benefit_grants_scope_unique" on "benefit_grants" ("customer_id", "benefit_id", "subscription_id", "order_id") nulls not distinct',
    },
  ],
});
export type BenefitGrant = InferEntity<typeof BenefitGrant>;

export const benefitGrantSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  granted_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  is_granted: z.boolean(),
  is_revoked: z.boolean(),
  subscription_id: z.uuid().nullable(),
  order_id: z.uuid().nullable(),
  customer_id: z.uuid(),
  /** Deprecated alias of customer_id, as the public API. */
  user_id: z.uuid(),
  benefit_id: z.uuid(),
  benefit_type: z.enum(BENEFIT_TYPES),
  customer: customerSchema,
  properties: z.record(z.string(), z.unknown()),
});
export type BenefitGrantRead = z.infer<typeof benefitGrantSchema>;

/** Needs `customer` and `benefit` loaded. */
export function serializeBenefitGrant(g: BenefitGrant): BenefitGrantRead {
  return {
    id: g.id,
    created_at: g.createdAt.toISOString(),
    modified_at: g.modifiedAt?.toISOString() ?? null,
    granted_at: g.grantedAt?.toISOString() ?? null,
    revoked_at: g.revokedAt?.toISOString() ?? null,
    is_granted: g.grantedAt != null,
    is_revoked: g.revokedAt != null,
    subscription_id: g.subscriptionId ?? null,
    order_id: g.orderId ?? null,
    customer_id: g.customer.id,
    user_id: g.customer.id,
    benefit_id: g.benefit.id,
    benefit_type: g.benefit.type,
    customer: serializeCustomer(g.customer),
    properties: g.properties,
  };
}
