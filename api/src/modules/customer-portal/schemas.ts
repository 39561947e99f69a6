/**
 * Wire shapes of the customer portal (`/v1/customer-portal/...`), as `@polar-sh/sdk` 0.29.3 parses
 * them: the portal customer (`CustomerPortalCustomer`), the customer's benefit grants
 * (`CustomerBenefitGrant*`, one variant per benefit type with the benefit's subscriber view), the
 * public organization (`CustomerOrganization`) and the public license key calls.
 */
import { z } from 'zod/v4';
import { addressOutSchema, billingAddressSchema, customerEmailSchema, serializeBillingAddress } from '../customers/schemas.ts';
import type { Customer } from '../customers/entities.ts';
import { BENEFIT_TYPES, type Benefit, type BenefitType } from '../benefits/entities.ts';
import { benefitGrantSchema, serializeBenefitGrant, type BenefitGrant } from '../benefits/grants.ts';
import { serializeBenefitPublic } from '../benefits/schemas.ts';
import { strategyFor } from '../benefits/types/index.ts';
import { organizationSchema, serializeOrganization } from '../organizations/schemas.ts';
import type { Organization } from '../organizations/entities.ts';
import { productPublicSchema } from '../products/schemas.ts';
import { licenseKeyActivationSchema, licenseKeySchema } from '../license-keys/schemas.ts';

// ---- Customer ---------------------------------------------------------------------------------------

export const portalCustomerSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  email: z.string(),
  email_verified: z.boolean(),
  name: z.string().nullable(),
  billing_address: addressOutSchema.nullable(),
  tax_id: z.tuple([z.string(), z.string().nullable()]).nullable(),
  /** Accounts connected in the portal by platform (`github`, `discord`): `{account_id, account_username}`. */
  oauth_accounts: z.record(z.string(), z.object({ account_id: z.string(), account_username: z.string().nullable() })),
});
export type PortalCustomerRead = z.infer<typeof portalCustomerSchema>;

/** PATCH /customers/me: every key optional; `tax_id` is a plain string checked against the billing country. */
export const portalCustomerUpdateSchema = z.object({
  email: customerEmailSchema.nullish(),
  name: z.string().trim().max(255).nullish(),
  billing_address: billingAddressSchema.nullish(),
  tax_id: z.string().trim().max(255).nullish(),
});
export type PortalCustomerUpdate = z.output<typeof portalCustomerUpdateSchema>;

export function serializePortalCustomer(c: Customer): PortalCustomerRead {
  return {
    id: c.id,
    created_at: c.createdAt.toISOString(),
    modified_at: c.modifiedAt?.toISOString() ?? null,
    email: c.email,
    email_verified: c.emailVerified,
    name: c.name ?? null,
    billing_address: serializeBillingAddress(c.billingAddress),
    tax_id: c.taxId ?? null,
    oauth_accounts: c.oauthAccounts ?? {},
  };
}

// ---- Organization -------------------------------------------------------------------------------------

/** The public organization page: its products in their public shape (benefits without properties). */
export const customerOrganizationSchema = z.object({
  organization: organizationSchema,
  products: z.array(productPublicSchema),
});

export function serializeCustomerOrganization(o: Organization, products: z.infer<typeof productPublicSchema>[]) {
  return { organization: serializeOrganization(o), products };
}

// ---- Benefit grants -----------------------------------------------------------------------------------

/**
 * What a customer sees of a benefit's settings (`Benefit*SubscriberProperties`): never the seller's
 * secrets (a Discord guild token) nor archived files.
 */
export function subscriberProperties(b: Benefit): Record<string, unknown> {
  const p = strategyFor(b.type).serializeProperties(b.properties);
  switch (b.type) {
    case 'custom':
      return { note: p.note ?? null };
    case 'discord':
      return { guild_id: p.guild_id };
    case 'downloadables':
      return { active_files: p.active_files };
    case 'github_repository':
      return { repository_owner: p.repository_owner, repository_name: p.repository_name };
    default:
      return p;
  }
}

export const subscriberBenefitSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  type: z.enum(BENEFIT_TYPES),
  description: z.string(),
  selectable: z.boolean(),
  deletable: z.boolean(),
  organization_id: z.uuid(),
  organization: organizationSchema,
  properties: z.record(z.string(), z.unknown()),
});

/** Needs `organization` loaded. */
export function serializeSubscriberBenefit(b: Benefit): z.infer<typeof subscriberBenefitSchema> {
  return {
    ...serializeBenefitPublic(b),
    organization: serializeOrganization(b.organization),
    properties: subscriberProperties(b),
  };
}

/** The grant properties each type's SDK variant knows (`BenefitGrant*Properties`); others are dropped. */
const GRANT_PROPERTY_KEYS: Record<BenefitType, string[]> = {
  custom: [],
  discord: ['account_id', 'guild_id', 'role_id'],
  downloadables: ['files'],
  github_repository: ['account_id', 'repository_owner', 'repository_name', 'permission'],
  license_keys: ['license_key_id', 'display_key'],
  meter_credit: [],
};

export function grantProperties(type: BenefitType, stored: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(GRANT_PROPERTY_KEYS[type].filter((k) => stored[k] != null).map((k) => [k, stored[k]]));
}

/** The seller's grant read model, with the customer and benefit as the portal shows them and the properties the customer may see. */
export const customerBenefitGrantSchema = benefitGrantSchema
  .omit({ user_id: true, benefit_type: true, customer: true })
  .extend({ customer: portalCustomerSchema, benefit: subscriberBenefitSchema });
export type CustomerBenefitGrantRead = z.infer<typeof customerBenefitGrantSchema>;

/** Needs `customer`, `benefit` and `benefit.organization` loaded. */
export function serializeCustomerBenefitGrant(g: BenefitGrant): CustomerBenefitGrantRead {
  const { user_id: _u, benefit_type: _t, customer: _c, ...rest } = serializeBenefitGrant(g);
  return {
    ...rest,
    customer: serializePortalCustomer(g.customer),
    benefit: serializeSubscriberBenefit(g.benefit),
    properties: grantProperties(g.benefit.type, g.properties),
  };
}

const accountProperties = z.object({ account_id: z.string().min(1).max(255) });

/** PATCH /benefit-grants/{id}: `benefit_type` must be the grant's; discord and GitHub name an account. */
export const customerBenefitGrantUpdateSchema = z.discriminatedUnion('benefit_type', [
  z.object({ benefit_type: z.literal('custom') }),
  z.object({ benefit_type: z.literal('downloadables') }),
  z.object({ benefit_type: z.literal('license_keys') }),
  z.object({ benefit_type: z.literal('meter_credit') }),
  z.object({ benefit_type: z.literal('discord'), properties: accountProperties }),
  z.object({ benefit_type: z.literal('github_repository'), properties: accountProperties }),
]);
export type CustomerBenefitGrantUpdate = z.output<typeof customerBenefitGrantUpdateSchema>;

// ---- License keys (public calls) ----------------------------------------------------------------------

/** Free-form conditions or meta: string keys, string / number / boolean values, at most 50. */
const flatRecord = z
  .record(z.string().min(1).max(40), z.union([z.string().max(500), z.number(), z.boolean()]))
  .refine((m) => Object.keys(m).length <= 50, { message: 'at most 50 keys' });

export const licenseKeyValidateSchema = z.object({
  key: z.string().min(1).max(255),
  organization_id: z.uuid(),
  activation_id: z.uuid().nullish(),
  benefit_id: z.uuid().nullish(),
  customer_id: z.uuid().nullish(),
  increment_usage: z.number().int().min(0).max(2_147_483_647).nullish(),
  conditions: flatRecord.optional(),
});

export const licenseKeyActivateSchema = z.object({
  key: z.string().min(1).max(255),
  organization_id: z.uuid(),
  label: z.string().trim().min(1).max(255),
  conditions: flatRecord.optional(),
  meta: flatRecord.optional(),
});

export const licenseKeyDeactivateSchema = z.object({
  key: z.string().min(1).max(255),
  organization_id: z.uuid(),
  activation_id: z.uuid(),
});

export const validatedLicenseKeySchema = licenseKeySchema.extend({
  activation: licenseKeyActivationSchema.nullable(),
});
