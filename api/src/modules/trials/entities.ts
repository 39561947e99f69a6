/**
 * Trial redemptions: one row per trial given, written in the transaction that confirms the checkout
 * giving it. The unique keys (product + customer, product + email) make "one trial per customer and
 * product" hold in the database even when one buyer confirms two checkouts of the product at once.
 */
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { Customer } from '../customers/entities.ts';
import { Organization } from '../organizations/entities.ts';
import { Product } from '../products/entities.ts';

export const TrialRedemption = defineEntity({
  name: 'TrialRedemption',
  tableName: 'trial_redemptions',
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    product: () => p.manyToOne(Product).deleteRule('cascade'),
    customer: () => p.manyToOne(Customer).deleteRule('cascade').index(),
    /** The buyer's email at the checkout, lower-cased. */
    customerEmail: p.string(),
    /** The checkout that gave the trial (no foreign key: the row outlives a pruned checkout). */
    checkoutId: p.uuid(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [
    { name: 'trial_redemptions_product_customer_unique', properties: ['product', 'customer'] },
    { name: 'trial_redemptions_product_email_unique', properties: ['product', 'customerEmail'] },
  ],
});
export type TrialRedemption = InferEntity<typeof TrialRedemption>;
