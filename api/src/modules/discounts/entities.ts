/**
 * Discounts of an organization: fixed (amount + currency, minor units) or percentage (basis points),
 * applied once, forever or for a number of months. Soft-deleted with `deletedAt`; the code is unique
 * per organization among live discounts, compared case-insensitively.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Product } from '../products/entities.ts';

export const DISCOUNT_TYPES = ['fixed', 'percentage'] as const;
export const DISCOUNT_DURATIONS = ['once', 'forever', 'repeating'] as const;
export type DiscountType = (typeof DISCOUNT_TYPES)[number];
export type DiscountDuration = (typeof DISCOUNT_DURATIONS)[number];

export const Discount = defineEntity({
  name: 'Discount',
  tableName: 'discounts',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    /** Stored as given; unique per organization compared lower-case. */
    code: p.string().length(256).nullable(),
    type: p.enum(DISCOUNT_TYPES),
    duration: p.enum(DISCOUNT_DURATIONS),
    /** repeating only. */
    durationInMonths: p.integer().nullable(),
    /** fixed only: minor units of `currency`. */
    amount: p.integer().nullable(),
    currency: p.string().length(3).nullable(),
    /** percentage only: 1..10000. */
    basisPoints: p.integer().nullable(),
    startsAt: p.datetime().nullable(),
    endsAt: p.datetime().nullable(),
    maxRedemptions: p.integer().nullable(),
    /** Maintained by checkout when a redemption is reserved; read-only on the API. */
    redemptionsCount: p.integer().default(0),
    metadata: p.json<Metadata>(),
    /** Products the discount is restricted to; empty means every product. */
    products: () => p.manyToMany(Product).pivotTable('discount_products'),
    deletedAt: p.datetime().nullable(),
  },
  indexes: [
    {
      name: 'discounts_organization_code_live_unique',
      expression:
        'create unique index "discounts_organization_code_live_unique" on "discounts" ("organization_id", lower("code")) where "deleted_at" is null and "code" is not null',
    },
  ],
});
export type Discount = InferEntity<typeof Discount>;
