/** Wire shapes of products and prices, as `@polar-sh/sdk` parses them (all keys present, nulls explicit). */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { RECURRING_INTERVALS, type Product, type ProductPrice } from './entities.ts';

/** ISO 4217 code, stored lower-case. */
const currency = z
  .string()
  .regex(/^[a-zA-Z]{3}$/, { message: 'Must be a three-letter ISO 4217 currency code' })
  .transform((c) => c.toLowerCase())
  .default('usd');
/** Minor units; 0 < amount ≤ 99 999 999 (Stripe's ceiling for a single charge). */
const amount = z.number().int().min(0).max(99_999_999);

export const priceCreateSchema = z.discriminatedUnion('amount_type', [
  z.object({ amount_type: z.literal('fixed'), price_amount: amount.min(50), price_currency: currency }),
  z
    .object({
      amount_type: z.literal('custom'),
      price_currency: currency,
      minimum_amount: amount.min(50).nullish(),
      maximum_amount: amount.nullish(),
      preset_amount: amount.nullish(),
    })
    .refine((p) => p.minimum_amount == null || p.maximum_amount == null || p.minimum_amount <= p.maximum_amount, {
      message: 'minimum_amount must not exceed maximum_amount',
      path: ['maximum_amount'],
    }),
  z.object({ amount_type: z.literal('free') }),
]);
export type PriceCreate = z.infer<typeof priceCreateSchema>;

export const productCreateSchema = z.object({
  name: z.string().trim().min(3).max(255),
  description: z.string().max(10_000).nullish(),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullish(),
  prices: z.array(priceCreateSchema).min(1).max(10),
  metadata: metadataSchema.optional(),
  organization_id: z.uuid().nullish(),
});

const base = {
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  is_archived: z.boolean(),
  product_id: z.uuid(),
  type: z.enum(['one_time', 'recurring']),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullable(),
};
export const priceSchema = z.union([
  z.object({ ...base, amount_type: z.literal('fixed'), price_currency: z.string(), price_amount: z.number().int() }),
  z.object({
    ...base,
    amount_type: z.literal('custom'),
    price_currency: z.string(),
    minimum_amount: z.number().int().nullable(),
    maximum_amount: z.number().int().nullable(),
    preset_amount: z.number().int().nullable(),
  }),
  z.object({ ...base, amount_type: z.literal('free') }),
]);

export const productSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  name: z.string(),
  description: z.string().nullable(),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullable(),
  is_recurring: z.boolean(),
  is_archived: z.boolean(),
  organization_id: z.uuid(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  prices: z.array(priceSchema),
  benefits: z.array(z.unknown()),
  medias: z.array(z.unknown()),
  attached_custom_fields: z.array(z.unknown()),
});

export function serializePrice(price: ProductPrice, product: Product): z.infer<typeof priceSchema> {
  const common = {
    id: price.id,
    created_at: price.createdAt.toISOString(),
    modified_at: price.modifiedAt?.toISOString() ?? null,
    is_archived: price.isArchived,
    product_id: product.id,
    type: product.recurringInterval ? ('recurring' as const) : ('one_time' as const),
    recurring_interval: product.recurringInterval ?? null,
  };
  switch (price.amountType) {
    case 'fixed':
      return { ...common, amount_type: 'fixed', price_currency: price.priceCurrency, price_amount: price.priceAmount ?? 0 };
    case 'custom':
      return {
        ...common,
        amount_type: 'custom',
        price_currency: price.priceCurrency,
        minimum_amount: price.minimumAmount ?? null,
        maximum_amount: price.maximumAmount ?? null,
        preset_amount: price.presetAmount ?? null,
      };
    default:
      return { ...common, amount_type: 'free' };
  }
}

export function serializeProduct(p: Product): z.infer<typeof productSchema> {
  return {
    id: p.id,
    created_at: p.createdAt.toISOString(),
    modified_at: p.modifiedAt?.toISOString() ?? null,
    name: p.name,
    description: p.description ?? null,
    recurring_interval: p.recurringInterval ?? null,
    is_recurring: p.recurringInterval != null,
    is_archived: p.isArchived,
    organization_id: p.organization.id,
    metadata: p.metadata,
    prices: p.prices.getItems().map((price) => serializePrice(price, p)),
    benefits: [],
    medias: [],
    attached_custom_fields: [],
  };
}
