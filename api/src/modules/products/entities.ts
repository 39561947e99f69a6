/**
 * Products, their prices, and what hangs off a product: benefits, media files and custom fields
 * (each an ordered link row). Amounts are integers in minor units of `price_currency`.
 *
 * Prices are never deleted: a price dropped from a product is archived (`isArchived`), because
 * orders and subscriptions keep pointing at it. `prices` holds all of them; the read model shows the
 * live ones.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Meter } from '../meters/entities.ts';
import { Benefit } from '../benefits/entities.ts';
import { File } from '../files/entities.ts';
import { CustomField } from '../custom-fields/entities.ts';
import { TRIAL_INTERVALS } from '../trials/intervals.ts';

export const RECURRING_INTERVALS = ['month', 'year'] as const;
export const AMOUNT_TYPES = ['fixed', 'custom', 'free', 'metered_unit'] as const;
export type AmountType = (typeof AMOUNT_TYPES)[number];
/** Fixed, custom and free prices set the product's price; metered ones add usage on top. */
export const STATIC_AMOUNT_TYPES: readonly AmountType[] = ['fixed', 'custom', 'free'];

export const Product = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    description: p.text().nullable(),
    /** Set at creation and never changed afterwards (null: one-time product). */
    recurringInterval: p.enum(RECURRING_INTERVALS).nullable(),
    /** A free trial before the first charge (recurring products only; both set or both null). */
    trialInterval: p.enum(TRIAL_INTERVALS).nullable(),
    trialIntervalCount: p.integer().nullable(),
    isArchived: p.boolean().default(false),
    metadata: p.json<Metadata>(),
    /** Every price ever attached, archived ones included. */
    prices: () => p.oneToMany(ProductPrice).mappedBy('product').orderBy({ createdAt: 'asc' }),
    productBenefits: () => p.oneToMany(ProductBenefit).mappedBy('product').orderBy({ order: 'asc' }),
    medias: () => p.oneToMany(ProductMedia).mappedBy('product').orderBy({ order: 'asc' }),
    attachedCustomFields: () => p.oneToMany(ProductCustomField).mappedBy('product').orderBy({ order: 'asc' }),
  },
  indexes: [
    {
      // The seller's list in its default order (newest first, then id): a page is read in index order.
      name: 'products_organization_created_at_id_index',
      expression: 'create index "products_organization_created_at_id_index" on "products" ("organization_id", "created_at" desc, "id")',
    },
  ],
});
export type Product = InferEntity<typeof Product>;

export const ProductPrice = defineEntity({
  name: 'ProductPrice',
  tableName: 'product_prices',
  properties: {
    ...baseProperties,
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    amountType: p.enum(AMOUNT_TYPES),
    priceCurrency: p.string().length(3).default('usd'),
    priceAmount: p.integer().nullable(),
    minimumAmount: p.integer().nullable(),
    maximumAmount: p.integer().nullable(),
    presetAmount: p.integer().nullable(),
    /** metered_unit: the meter whose quantity is billed. */
    meter: () => p.manyToOne(Meter).nullable().deleteRule('restrict').index(),
    /** metered_unit: price per unit in minor units, an exact decimal (may be fractional), never a float. */
    unitAmount: p.decimal('string').precision(17).scale(12).nullable(),
    /** metered_unit: optional cap per period, minor units. */
    capAmount: p.integer().nullable(),
    isArchived: p.boolean().default(false),
  },
});
export type ProductPrice = InferEntity<typeof ProductPrice>;

/** A benefit granted by a product, in display order. */
export const ProductBenefit = defineEntity({
  name: 'ProductBenefit',
  tableName: 'product_benefits',
  properties: {
    ...baseProperties,
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    benefit: () => p.manyToOne(Benefit).deleteRule('cascade').index(),
    order: p.integer(),
  },
  uniques: [{ properties: ['product', 'benefit'] }],
});
export type ProductBenefit = InferEntity<typeof ProductBenefit>;

/** A `product_media` file shown on a product, in display order. */
export const ProductMedia = defineEntity({
  name: 'ProductMedia',
  tableName: 'product_medias',
  properties: {
    ...baseProperties,
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    file: () => p.manyToOne(File).deleteRule('cascade').index(),
    order: p.integer(),
  },
  uniques: [{ properties: ['product', 'file'] }],
});
export type ProductMedia = InferEntity<typeof ProductMedia>;

/** A custom field asked at checkout for this product; `order` is its position in the form. */
export const ProductCustomField = defineEntity({
  name: 'ProductCustomField',
  tableName: 'product_custom_fields',
  properties: {
    ...baseProperties,
    product: () => p.manyToOne(Product).deleteRule('cascade').index(),
    customField: () => p.manyToOne(CustomField).deleteRule('cascade').index(),
    order: p.integer(),
    required: p.boolean(),
  },
  uniques: [{ properties: ['product', 'customField'] }],
});
export type ProductCustomField = InferEntity<typeof ProductCustomField>;
