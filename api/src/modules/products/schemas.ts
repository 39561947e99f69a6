/**
 * Wire shapes of products and prices, as `@polar-sh/sdk` 0.29.3 parses them (all keys present, nulls
 * explicit).
 *
 * SDK note: 0.29.3 knows fixed, custom and free prices only. Its price union is closed, so a product
 * holding a live `metered_unit` price does not parse in that SDK version (the whole product, and any
 * list containing it, fails with an SDKValidationError). We still return metered prices, as the
 * public API does today: raw HTTP clients and newer SDKs read them; products without metered prices
 * parse in 0.29.3 unchanged.
 */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import {
  serializeBenefit,
  serializeBenefitPublic,
  benefitPublicSchema,
  benefitSchema,
  type BenefitRead,
} from '../benefits/schemas.ts';
import { customFieldSchema, serializeCustomField } from '../custom-fields/schemas.ts';
import { serializeTrial, trialInputFields, trialOutFields } from '../trials/index.ts';
import { productMediaSchema, serializeProductMedia } from './media.ts';
import { RECURRING_INTERVALS, STATIC_AMOUNT_TYPES, type Product, type ProductPrice } from './entities.ts';

/** ISO 4217 code, stored lower-case. */
const currency = z
  .string()
  .regex(/^[a-zA-Z]{3}$/, { message: 'Must be a three-letter ISO 4217 currency code' })
  .transform((c) => c.toLowerCase())
  .default('usd');
/** Minor units; 0 ≤ amount ≤ 99 999 999 (Stripe's ceiling for a single charge). */
const amount = z.number().int().min(0).max(99_999_999);

/**
 * A metered unit price in minor units: an exact decimal with at most 5 integer digits and 12
 * decimals, greater than 0. Accepted as a string ("0.015") or a JSON number, stored as NUMERIC and
 * returned as a normalized string; it never goes through floating-point arithmetic.
 */
export const unitAmountSchema = z
  .union([z.string().trim(), z.number()])
  .transform((v, ctx) => {
    let s: string;
    if (typeof v === 'number') {
      if (!Number.isFinite(v)) s = 'x';
      else s = /e/i.test(String(v)) ? (Math.abs(v) < 1 ? v.toFixed(12) : 'x') : String(v);
    } else s = v;
    const normalized = normalizeDecimal(s);
    if (normalized === null) {
      ctx.addIssue({
        code: 'custom',
        message: 'Must be a decimal number with at most 5 integer digits and 12 decimal places',
        input: v,
      });
      return z.NEVER;
    }
    if (normalized === '0') {
      ctx.addIssue({ code: 'custom', message: 'Must be greater than 0', input: v });
      return z.NEVER;
    }
    return normalized;
  });

/** "0010.5000" → "10.5"; null when not a plain non-negative decimal within NUMERIC(17,12). */
export function normalizeDecimal(s: string): string | null {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(s);
  if (!m) return null;
  const int = m[1]!.replace(/^0+(?=\d)/, '');
  const frac = (m[2] ?? '').replace(/0+$/, '');
  if (int.length > 5 || frac.length > 12) return null;
  return frac ? `${int}.${frac}` : int;
}

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
    })
    .refine(
      (p) =>
        p.preset_amount == null ||
        ((p.minimum_amount == null || p.preset_amount >= p.minimum_amount) &&
          (p.maximum_amount == null || p.preset_amount <= p.maximum_amount)),
      { message: 'preset_amount must be between minimum_amount and maximum_amount', path: ['preset_amount'] },
    ),
  z.object({ amount_type: z.literal('free') }),
  z.object({
    amount_type: z.literal('metered_unit'),
    price_currency: currency,
    meter_id: z.uuid(),
    unit_amount: unitAmountSchema,
    cap_amount: amount.nullish(),
  }),
]);
export type PriceCreate = z.infer<typeof priceCreateSchema>;

/** An existing price kept as is, by id (`ExistingProductPrice`). */
export const existingPriceSchema = z.object({ id: z.uuid() });
export type ExistingPrice = z.infer<typeof existingPriceSchema>;

/**
 * A PATCH price item: `{id}` keeps an existing price, anything else creates one. Parsed by shape
 * (rather than a plain union) so errors point at the offending field.
 */
export const priceUpdateItemSchema = z
  .unknown()
  .transform((v, ctx): ExistingPrice | PriceCreate => {
    const schema: z.ZodType<ExistingPrice | PriceCreate> =
      v && typeof v === 'object' && 'id' in v ? existingPriceSchema : priceCreateSchema;
    const r = schema.safeParse(v);
    if (!r.success) {
      for (const issue of r.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
      return z.NEVER;
    }
    return r.data;
  })
  .meta({
    anyOf: [
      z.toJSONSchema(existingPriceSchema, { io: 'input' }),
      z.toJSONSchema(priceCreateSchema, { io: 'input', unrepresentable: 'any' }),
    ].map(({ $schema: _s, ...rest }) => rest),
  });

export const attachedCustomFieldCreateSchema = z.object({ custom_field_id: z.uuid(), required: z.boolean() });
export type AttachedCustomFieldCreate = z.infer<typeof attachedCustomFieldCreateSchema>;

const nameSchema = z.string().trim().min(3).max(255);
const descriptionSchema = z.string().max(10_000);

export const productCreateSchema = z.object({
  name: nameSchema,
  description: descriptionSchema.nullish(),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullish(),
  ...trialInputFields,
  prices: z.array(priceCreateSchema).min(1).max(10),
  medias: z.array(z.uuid()).max(20).nullish(),
  attached_custom_fields: z.array(attachedCustomFieldCreateSchema).max(50).nullish(),
  metadata: metadataSchema.optional(),
  organization_id: z.uuid().nullish(),
});
export type ProductCreate = z.infer<typeof productCreateSchema>;

/**
 * Every key optional; null means "leave as is" except for `description`, where null clears it.
 * `recurring_interval` is fixed at creation: sending a different value is a 422.
 */
export const productUpdateSchema = z.object({
  name: nameSchema.nullish(),
  description: descriptionSchema.nullish(),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullish(),
  /** Both null: no trial any more. */
  ...trialInputFields,
  is_archived: z.boolean().nullish(),
  metadata: metadataSchema.nullish(),
  prices: z.array(priceUpdateItemSchema).min(1).max(10).nullish(),
  medias: z.array(z.uuid()).max(20).nullish(),
  attached_custom_fields: z.array(attachedCustomFieldCreateSchema).max(50).nullish(),
});
export type ProductUpdate = z.infer<typeof productUpdateSchema>;

export const productBenefitsUpdateSchema = z.object({ benefits: z.array(z.uuid()).max(50) });

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
  z.object({
    ...base,
    amount_type: z.literal('metered_unit'),
    price_currency: z.string(),
    unit_amount: z.string(),
    cap_amount: z.number().int().nullable(),
    meter_id: z.uuid(),
    meter: z.object({ id: z.uuid(), name: z.string() }),
  }),
]);
export type PriceRead = z.infer<typeof priceSchema>;

export const attachedCustomFieldSchema = z.object({
  custom_field_id: z.uuid(),
  custom_field: customFieldSchema,
  order: z.number().int(),
  required: z.boolean(),
});

export const productSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  name: z.string(),
  description: z.string().nullable(),
  recurring_interval: z.enum(RECURRING_INTERVALS).nullable(),
  ...trialOutFields,
  is_recurring: z.boolean(),
  is_archived: z.boolean(),
  organization_id: z.uuid(),
  metadata: metadataOutputSchema,
  prices: z.array(priceSchema),
  benefits: z.array(benefitSchema),
  medias: z.array(productMediaSchema),
  attached_custom_fields: z.array(attachedCustomFieldSchema),
});
/**
 * A product as public pages show it (the public checkout, the public organization page; Polar's
 * `CheckoutProduct` / `CustomerProduct`): benefits without their properties, no seller metadata.
 */
export const productPublicSchema = productSchema.omit({ metadata: true }).extend({ benefits: z.array(benefitPublicSchema) });
export type ProductPublicRead = z.infer<typeof productPublicSchema>;

/** The read model (benefits typed loosely: each benefit type has its own properties). */
export type ProductRead = Omit<z.infer<typeof productSchema>, 'benefits'> & { benefits: BenefitRead[] };

/**
 * Relations `serializeProduct` reads. Load them first, e.g. `em.populate(product, PRODUCT_POPULATE)`
 * or `findOne(Product, ..., { populate: PRODUCT_POPULATE })`.
 */
export const PRODUCT_POPULATE = [
  'prices',
  'prices.meter',
  'productBenefits.benefit',
  'medias.file',
  'attachedCustomFields.customField',
] as const;

export function isStaticPrice(price: Pick<ProductPrice, 'amountType'>): boolean {
  return STATIC_AMOUNT_TYPES.includes(price.amountType);
}

/** Live prices in the order the public API shows them: the static price first, then by creation. */
export function livePrices(product: Product): ProductPrice[] {
  return product.prices
    .getItems()
    .filter((p) => !p.isArchived)
    .sort(
      (a, b) =>
        Number(isStaticPrice(b)) - Number(isStaticPrice(a)) || a.createdAt.getTime() - b.createdAt.getTime(),
    );
}

export function serializePrice(price: ProductPrice, product: Product): PriceRead {
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
    case 'metered_unit':
      return {
        ...common,
        amount_type: 'metered_unit',
        price_currency: price.priceCurrency,
        unit_amount: normalizeDecimal(price.unitAmount ?? '0') ?? String(price.unitAmount),
        cap_amount: price.capAmount ?? null,
        meter_id: price.meter!.id,
        meter: { id: price.meter!.id, name: price.meter!.name },
      };
    default:
      return { ...common, amount_type: 'free' };
  }
}

function loaded<T>(collection: { isInitialized(): boolean; getItems(): T[] }, what: string): T[] {
  if (!collection.isInitialized()) {
    throw new Error(`serializeProduct: product.${what} is not loaded; populate PRODUCT_POPULATE first`);
  }
  return collection.getItems();
}

/** Needs PRODUCT_POPULATE loaded. */
export function serializeProduct(p: Product): ProductRead {
  loaded(p.prices, 'prices');
  return {
    id: p.id,
    created_at: p.createdAt.toISOString(),
    modified_at: p.modifiedAt?.toISOString() ?? null,
    name: p.name,
    description: p.description ?? null,
    recurring_interval: p.recurringInterval ?? null,
    ...serializeTrial(p),
    is_recurring: p.recurringInterval != null,
    is_archived: p.isArchived,
    organization_id: p.organization.id,
    metadata: p.metadata,
    prices: livePrices(p).map((price) => serializePrice(price, p)),
    benefits: loaded(p.productBenefits, 'productBenefits').map((pb) => serializeBenefit(pb.benefit)),
    medias: loaded(p.medias, 'medias').map((m) => serializeProductMedia(m.file)),
    attached_custom_fields: loaded(p.attachedCustomFields, 'attachedCustomFields').map((a) => ({
      custom_field_id: a.customField.id,
      custom_field: serializeCustomField(a.customField),
      order: a.order,
      required: a.required,
    })),
  };
}

/** Needs PRODUCT_POPULATE loaded. The public shape (see `productPublicSchema`). */
export function serializeProductPublic(p: Product): ProductPublicRead {
  const { metadata: _metadata, benefits: _benefits, ...rest } = serializeProduct(p);
  return { ...rest, benefits: p.productBenefits.getItems().map((pb) => serializeBenefitPublic(pb.benefit)) };
}
