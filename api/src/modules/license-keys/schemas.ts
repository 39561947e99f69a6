/** Wire shapes of license keys and activations, as `@polar-sh/sdk` 0.29.3 parses them. */
import { z } from 'zod/v4';
import { customerSchema, serializeCustomer } from '../customers/schemas.ts';
import { int32 as int32Schema, isoDateTime } from '../../kit/validation.ts';
import { LICENSE_KEY_STATUSES, type LicenseKey, type LicenseKeyActivation } from './entities.ts';

const int32 = int32Schema();

/** Every key optional (only sent keys change). `usage` is set as given (the SDK always sends it, default 0). */
export const licenseKeyUpdateSchema = z.object({
  status: z.enum(LICENSE_KEY_STATUSES).nullish(),
  usage: int32.min(0).optional(),
  limit_activations: int32.min(1).max(50).nullish(),
  limit_usage: int32.min(1).nullish(),
  expires_at: isoDateTime().nullish(),
});
export type LicenseKeyUpdate = z.infer<typeof licenseKeyUpdateSchema>;

/** Deprecated `user` of the public API: the customer seen as a user. */
const licenseKeyUserSchema = z.object({
  id: z.uuid(),
  email: z.string(),
  public_name: z.string(),
  avatar_url: z.string().nullable(),
});

export const licenseKeySchema = z.object({
  id: z.uuid(),
  organization_id: z.uuid(),
  /** Deprecated alias of customer_id. */
  user_id: z.uuid(),
  customer_id: z.uuid(),
  user: licenseKeyUserSchema,
  customer: customerSchema,
  benefit_id: z.uuid(),
  key: z.string(),
  display_key: z.string(),
  status: z.enum(LICENSE_KEY_STATUSES),
  limit_activations: z.number().int().nullable(),
  usage: z.number().int(),
  limit_usage: z.number().int().nullable(),
  validations: z.number().int(),
  last_validated_at: z.string().nullable(),
  expires_at: z.string().nullable(),
});
export type LicenseKeyRead = z.infer<typeof licenseKeySchema>;

export const licenseKeyActivationSchema = z.object({
  id: z.uuid(),
  license_key_id: z.uuid(),
  label: z.string(),
  meta: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  modified_at: z.string().nullable(),
});

export const licenseKeyWithActivationsSchema = licenseKeySchema.extend({
  activations: z.array(licenseKeyActivationSchema),
});

export const licenseKeyActivationReadSchema = licenseKeyActivationSchema.extend({ license_key: licenseKeySchema });

/** Needs `customer` loaded. */
export function serializeLicenseKey(k: LicenseKey): LicenseKeyRead {
  const customer = serializeCustomer(k.customer);
  return {
    id: k.id,
    organization_id: k.organization.id,
    user_id: k.customer.id,
    customer_id: k.customer.id,
    user: { id: k.customer.id, email: customer.email, public_name: customer.name ?? customer.email, avatar_url: customer.avatar_url },
    customer,
    benefit_id: k.benefit.id,
    key: k.key,
    display_key: k.displayKey,
    status: k.status,
    limit_activations: k.limitActivations ?? null,
    usage: k.usage,
    limit_usage: k.limitUsage ?? null,
    validations: k.validations,
    last_validated_at: k.lastValidatedAt?.toISOString() ?? null,
    expires_at: k.expiresAt?.toISOString() ?? null,
  };
}

export function serializeActivation(a: LicenseKeyActivation): z.infer<typeof licenseKeyActivationSchema> {
  return {
    id: a.id,
    license_key_id: a.licenseKey.id,
    label: a.label,
    meta: a.meta,
    created_at: a.createdAt.toISOString(),
    modified_at: a.modifiedAt?.toISOString() ?? null,
  };
}

/** Needs `customer` and `activations` loaded; lists live activations only. */
export function serializeLicenseKeyWithActivations(k: LicenseKey): z.infer<typeof licenseKeyWithActivationsSchema> {
  return {
    ...serializeLicenseKey(k),
    activations: k.activations
      .getItems()
      .filter((a) => a.deletedAt == null)
      .map(serializeActivation),
  };
}
