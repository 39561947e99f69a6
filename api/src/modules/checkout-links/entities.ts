/**
 * Checkout links: a shareable, reusable entry point (`client_secret`) that starts a checkout for one
 * or more products of an organization. Soft-deleted with `deletedAt`.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Product, ProductPrice } from '../products/entities.ts';
import { Discount } from '../discounts/entities.ts';
import { TRIAL_INTERVALS } from '../trials/intervals.ts';

export const CheckoutLink = defineEntity({
  name: 'CheckoutLink',
  tableName: 'checkout_links',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    /** `polar_cl_…`; public (it is part of the link's URL), so stored as is. */
    clientSecret: p.string().unique(),
    paymentProcessor: p.string().default('stripe'),
    label: p.string().nullable(),
    allowDiscountCodes: p.boolean().default(true),
    discount: () => p.manyToOne(Discount).nullable().deleteRule('set null').index(),
    successUrl: p.text().nullable(),
    /** A trial for checkouts of this link, overriding the product's (both set or both null). */
    trialInterval: p.enum(TRIAL_INTERVALS).nullable(),
    trialIntervalCount: p.integer().nullable(),
    metadata: p.json<Metadata>(),
    /** The products offered, in the order given. */
    products: () => p.manyToMany(Product).pivotTable('checkout_link_products').fixedOrder(),
    /** Set when the link was created for one price (`product_price_id`); preferred as `product_price`. */
    productPrice: () => p.manyToOne(ProductPrice).nullable().deleteRule('set null').index(),
    deletedAt: p.datetime().nullable(),
  },
});
export type CheckoutLink = InferEntity<typeof CheckoutLink>;
