/**
 * Wire shapes of discounts, as `@polar-sh/sdk` 0.29.3 parses them. The SDK's `Discount` union is
 * first-match (percentage once/forever, fixed once/forever, percentage repeating, fixed repeating),
 * so a fixed discount never carries `basis_points` and a percentage one never carries `amount`.
 */
import { z } from 'zod/v4';
import { int32, isoDateTime, metadataSchema } from '../../kit/validation.ts';
import { metadataOutputSchema } from '../../kit/route-helpers.ts';
import type { Product } from '../products/entities.ts';
import { productSchema } from '../products/schemas.ts';
import { DISCOUNT_DURATIONS, DISCOUNT_TYPES, type Discount } from './entities.ts';

const datetime = isoDateTime().transform((v) => new Date(v));
export const discountNameSchema = z.string().trim().min(1).max(255);
/** 3..256 alphanumeric characters (the public API's rule). */
export const discountCodeSchema = z
  .string()
  .min(3)
  .max(256)
  .regex(/^[a-zA-Z0-9]+$/, { message: 'The code may only contain letters and digits' });
const currency = z
  .string()
  .regex(/^[a-zA-Z]{3}$/, { message: 'Must be a three-letter ISO 4217 currency code' })
  .transform((c) => c.toLowerCase());
const fixedAmount = z.number().int().min(1).max(99_999_999);
const basisPoints = z.number().int().min(1).max(10_000);
const durationInMonths = z.number().int().min(1).max(999);

type Issue = { path: (string | number)[]; message: string; code: 'custom'; input?: unknown };

export const discountCreateSchema = z
  .object({
    type: z.enum(DISCOUNT_TYPES),
    duration: z.enum(DISCOUNT_DURATIONS),
    duration_in_months: durationInMonths.nullish(),
    amount: fixedAmount.nullish(),
    currency: currency.nullish(),
    basis_points: basisPoints.nullish(),
    name: discountNameSchema,
    code: discountCodeSchema.nullish(),
    starts_at: datetime.nullish(),
    ends_at: datetime.nullish(),
    max_redemptions: int32().min(1).nullish(),
    products: z.array(z.uuid()).max(100).nullish(),
    metadata: metadataSchema.optional(),
    organization_id: z.uuid().nullish(),
  })
  .check((ctx) => {
    // Cross-field rules only once every field is valid on its own.
    if (ctx.issues.length) return;
    const b = ctx.value;
    const issues: Issue[] = [];
    if (b.duration === 'repeating' && b.duration_in_months == null) {
      issues.push({ path: ['duration_in_months'], message: 'Field required for a repeating discount', code: 'custom' });
    }
    if (b.duration !== 'repeating' && b.duration_in_months != null) {
      issues.push({
        path: ['duration_in_months'],
        message: 'Only a repeating discount has duration_in_months',
        code: 'custom',
        input: b.duration_in_months,
      });
    }
    if (b.type === 'fixed') {
      if (b.amount == null) issues.push({ path: ['amount'], message: 'Field required for a fixed discount', code: 'custom' });
      if (b.basis_points != null) {
        issues.push({ path: ['basis_points'], message: 'A fixed discount has no basis_points', code: 'custom', input: b.basis_points });
      }
    } else {
      if (b.basis_points == null) {
        issues.push({ path: ['basis_points'], message: 'Field required for a percentage discount', code: 'custom' });
      }
      if (b.amount != null) {
        issues.push({ path: ['amount'], message: 'A percentage discount has no amount', code: 'custom', input: b.amount });
      }
    }
    if (b.starts_at && b.ends_at && b.ends_at.getTime() <= b.starts_at.getTime()) {
      issues.push({ path: ['ends_at'], message: 'ends_at must be after starts_at', code: 'custom' });
    }
    for (const i of issues) ctx.issues.push({ ...i, input: i.input ?? b });
  });
export type DiscountCreate = z.output<typeof discountCreateSchema>;

/** Every key optional; `null` clears nullable fields (code, starts_at, ends_at, max_redemptions). */
export const discountUpdateSchema = z.object({
  metadata: metadataSchema.nullish(),
  name: discountNameSchema.nullish(),
  code: discountCodeSchema.nullish(),
  starts_at: datetime.nullish(),
  ends_at: datetime.nullish(),
  max_redemptions: int32().min(1).nullish(),
  duration: z.enum(DISCOUNT_DURATIONS).nullish(),
  duration_in_months: durationInMonths.nullish(),
  type: z.enum(DISCOUNT_TYPES).nullish(),
  amount: fixedAmount.nullish(),
  currency: currency.nullish(),
  basis_points: basisPoints.nullish(),
  products: z.array(z.uuid()).max(100).nullish(),
});
export type DiscountUpdate = z.output<typeof discountUpdateSchema>;

const metadataOut = metadataOutputSchema;

/** A discount's product: the product's own columns, as in its read model (no prices, benefits or media). */
export const discountProductSchema = productSchema.pick({
  id: true,
  created_at: true,
  modified_at: true,
  name: true,
  description: true,
  recurring_interval: true,
  is_recurring: true,
  is_archived: true,
  organization_id: true,
});

const commonOut = {
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOut,
  name: z.string(),
  code: z.string().nullable(),
  starts_at: z.string().nullable(),
  ends_at: z.string().nullable(),
  max_redemptions: z.number().int().nullable(),
  redemptions_count: z.number().int(),
  organization_id: z.uuid(),
};
const percentageOut = { type: z.literal('percentage'), basis_points: z.number().int() };
const fixedOut = { type: z.literal('fixed'), amount: z.number().int(), currency: z.string() };
const onceForever = { duration: z.enum(['once', 'forever']) };
const repeating = { duration: z.literal('repeating'), duration_in_months: z.number().int() };

/** The discount without its products (embedded in checkout links and checkouts). */
export const discountBaseSchema = z.union([
  z.object({ ...commonOut, ...percentageOut, ...onceForever }),
  z.object({ ...commonOut, ...fixedOut, ...onceForever }),
  z.object({ ...commonOut, ...percentageOut, ...repeating }),
  z.object({ ...commonOut, ...fixedOut, ...repeating }),
]);
const withProducts = { products: z.array(discountProductSchema) };
export const discountSchema = z.union([
  z.object({ ...commonOut, ...percentageOut, ...onceForever, ...withProducts }),
  z.object({ ...commonOut, ...fixedOut, ...onceForever, ...withProducts }),
  z.object({ ...commonOut, ...percentageOut, ...repeating, ...withProducts }),
  z.object({ ...commonOut, ...fixedOut, ...repeating, ...withProducts }),
]);
export type DiscountBaseOut = z.infer<typeof discountBaseSchema>;
export type DiscountOut = z.infer<typeof discountSchema>;

export function serializeDiscountProduct(p: Product): z.infer<typeof discountProductSchema> {
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
  };
}

export function serializeDiscountBase(d: Discount): DiscountBaseOut {
  const common = {
    id: d.id,
    created_at: d.createdAt.toISOString(),
    modified_at: d.modifiedAt?.toISOString() ?? null,
    metadata: d.metadata,
    name: d.name,
    code: d.code ?? null,
    starts_at: d.startsAt?.toISOString() ?? null,
    ends_at: d.endsAt?.toISOString() ?? null,
    max_redemptions: d.maxRedemptions ?? null,
    redemptions_count: d.redemptionsCount,
    organization_id: d.organization.id,
  };
  const value =
    d.type === 'percentage'
      ? { type: 'percentage' as const, basis_points: d.basisPoints ?? 0 }
      : { type: 'fixed' as const, amount: d.amount ?? 0, currency: d.currency ?? 'usd' };
  const duration =
    d.duration === 'repeating'
      ? { duration: 'repeating' as const, duration_in_months: d.durationInMonths ?? 1 }
      : { duration: d.duration };
  return { ...common, ...value, ...duration } as DiscountBaseOut;
}

/** Needs `products` populated. */
export function serializeDiscount(d: Discount): DiscountOut {
  const products = [...d.products.getItems()].sort(
    (a, b) => a.createdAt.getTime() - b.createdAt.getTime() || a.id.localeCompare(b.id),
  );
  return { ...serializeDiscountBase(d), products: products.map(serializeDiscountProduct) } as DiscountOut;
}
