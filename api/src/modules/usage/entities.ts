/**
 * Usage billing records: what a subscription's renewal billed of one meter (one row per subscription,
 * meter and period end). Events are billed by two bounds kept here (docs/billing.md):
 * - `periodEnd`: events whose `timestamp` is before it belong to this or an earlier period;
 * - `billedThrough`: the ingestion watermark: events ingested (`created_at`) at or before it had
 *   been seen by this renewal.
 * A renewal bills the events of {timestamp < periodEnd, created_at ≤ billedThrough} not in the
 * previous record's set, so an event that arrives late (its timestamp in a closed period) falls in
 * the next renewal's set, once. `creditsUsed` is what the line consumed of the customer's meter
 * credits (balance = credited units − Σ creditsUsed).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Customer } from '../customers/entities.ts';
import { Meter } from '../meters/entities.ts';
import { Order } from '../orders/entities.ts';
import { ProductPrice } from '../products/entities.ts';
import { Subscription } from '../subscriptions/entities.ts';

export const MeteredBilling = defineEntity({
  name: 'MeteredBilling',
  tableName: 'metered_billings',
  properties: {
    ...baseProperties,
    subscription: () => p.manyToOne(Subscription).deleteRule('cascade').index(false),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(false),
    meter: () => p.manyToOne(Meter).deleteRule('cascade').index(false),
    price: () => p.manyToOne(ProductPrice).deleteRule('cascade').index(false),
    order: () => p.manyToOne(Order).nullable().deleteRule('set null').index(),
    periodStart: p.datetime(),
    periodEnd: p.datetime(),
    billedThrough: p.datetime(),
    /** Exact decimals (numeric), as strings. */
    usage: p.decimal('string').columnType('numeric'),
    creditsUsed: p.decimal('string').columnType('numeric'),
    billableUnits: p.decimal('string').columnType('numeric'),
    unitAmount: p.decimal('string').columnType('numeric'),
    capAmount: p.integer().nullable(),
    /** Minor units, the line's amount before the order's discount and tax. */
    amount: p.integer(),
  },
  uniques: [{ name: 'metered_billings_subscription_meter_period_unique', properties: ['subscription', 'meter', 'periodEnd'] }],
  indexes: [{ name: 'metered_billings_customer_meter_index', properties: ['customer', 'meter'] }],
});
export type MeteredBilling = InferEntity<typeof MeteredBilling>;
