/** Products and their prices. Amounts are integers in minor units of `price_currency`. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Meter } from '../meters/entities.ts';

export const RECURRING_INTERVALS = ['month', 'year'] as const;
export const AMOUNT_TYPES = ['fixed', 'custom', 'free', 'metered_unit'] as const;

export const Product = defineEntity({
  name: 'Product',
  tableName: 'products',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    description: p.text().nullable(),
    recurringInterval: p.enum(RECURRING_INTERVALS).nullable(),
    isArchived: p.boolean().default(false),
    metadata: p.json<Metadata>(),
    prices: () => p.oneToMany(ProductPrice).mappedBy('product').orderBy({ createdAt: 'asc' }),
  },
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
