/**
 * Wire shapes of benefits, as `@polar-sh/sdk` 0.29.3 parses them (`Benefit*`). Bodies and read
 * models are discriminated by `type`; each type's properties come from its strategy (types/*.ts).
 */
import { z } from 'zod/v4';
import { BENEFIT_TYPES, type Benefit, type BenefitType } from './entities.ts';
import { benefitStrategies, strategyFor } from './types/index.ts';

/** 3 to 42 characters, as the public API. */
const description = z.string().trim().min(3).max(42);

const createVariant = <T extends BenefitType, E extends z.ZodRawShape = Record<never, never>>(type: T, extra?: E) =>
  z.object({
    type: z.literal(type),
    description,
    organization_id: z.uuid().nullish(),
    properties: benefitStrategies[type].propertiesSchema as (typeof benefitStrategies)[T]['propertiesSchema'],
    ...(extra as E),
  });

export const benefitCreateSchema = z.discriminatedUnion('type', [
  createVariant('custom', { is_tax_applicable: z.boolean().optional() }),
  createVariant('discord'),
  createVariant('downloadables'),
  createVariant('github_repository'),
  createVariant('license_keys'),
  createVariant('meter_credit'),
]);
export type BenefitCreate = z.infer<typeof benefitCreateSchema>;

/** `type` is required and must be the benefit's type; `properties`, when given, replace the old ones. */
const updateVariant = <T extends BenefitType, E extends z.ZodRawShape = Record<never, never>>(type: T, extra?: E) =>
  z.object({
    type: z.literal(type),
    description: description.nullish(),
    properties: (benefitStrategies[type].propertiesSchema as (typeof benefitStrategies)[T]['propertiesSchema']).nullish(),
    ...(extra as E),
  });

export const benefitUpdateSchema = z.discriminatedUnion('type', [
  updateVariant('custom', { is_tax_applicable: z.boolean().nullish() }),
  updateVariant('discord'),
  updateVariant('downloadables'),
  updateVariant('github_repository'),
  updateVariant('license_keys'),
  updateVariant('meter_credit'),
]);
export type BenefitUpdate = z.infer<typeof benefitUpdateSchema>;

const readBase = {
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  description: z.string(),
  selectable: z.boolean(),
  deletable: z.boolean(),
  organization_id: z.uuid(),
};
const readVariant = <T extends BenefitType>(type: T, extra: Record<string, z.ZodType> = {}) =>
  z.object({ ...readBase, type: z.literal(type), properties: benefitStrategies[type].readPropertiesSchema, ...extra });

export const benefitSchema = z.union([
  readVariant('custom', { is_tax_applicable: z.boolean() }),
  readVariant('discord'),
  readVariant('downloadables'),
  readVariant('github_repository'),
  readVariant('license_keys'),
  readVariant('meter_credit'),
]);
export type BenefitRead = {
  id: string;
  created_at: string;
  modified_at: string | null;
  type: BenefitType;
  description: string;
  selectable: boolean;
  deletable: boolean;
  organization_id: string;
  properties: Record<string, unknown>;
  is_tax_applicable?: boolean;
};

/**
 * A benefit as public pages show it (Polar's `BenefitBase`, what the public checkout and the public
 * organization page carry): never its `properties` (a custom benefit's note, downloadable file ids,
 * repository and server ids are the seller's and the customers').
 */
export const benefitPublicSchema = z.object({ ...readBase, type: z.enum(BENEFIT_TYPES) });
export type BenefitPublicRead = z.infer<typeof benefitPublicSchema>;

export function serializeBenefitPublic(b: Benefit): BenefitPublicRead {
  return {
    id: b.id,
    created_at: b.createdAt.toISOString(),
    modified_at: b.modifiedAt?.toISOString() ?? null,
    type: b.type,
    description: b.description,
    selectable: b.selectable,
    deletable: b.deletable,
    organization_id: b.organization.id,
  };
}

export function serializeBenefit(b: Benefit): BenefitRead {
  return {
    ...serializeBenefitPublic(b),
    properties: strategyFor(b.type).serializeProperties(b.properties),
    ...(b.type === 'custom' ? { is_tax_applicable: b.isTaxApplicable } : {}),
  };
}

export { BENEFIT_TYPES };
