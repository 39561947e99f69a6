/**
 * `license_keys`: issues the buyer a license key (optional prefix), with optional expiry (ttl in
 * years, months or days from the grant), activation limit (1..50) and usage limit. Granting issues a
 * key (or, on refresh, re-applies the limits and re-enables the existing one); revoking marks it
 * revoked.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod/v4';
import { LicenseKey } from '../../license-keys/entities.ts';
import { issueLicenseKey, licenseKeyLimits, type LicenseKeysBenefitProperties } from '../../license-keys/service.ts';
import { sameJson, type BenefitTypeStrategy } from './strategy.ts';

const TTL_MAX = { year: 457, month: 1200, day: 36500 } as const;

/** One shape per timeframe, so the document shows each one's maximum ttl. */
const expires = z.discriminatedUnion(
  'timeframe',
  (['year', 'month', 'day'] as const).map((timeframe) =>
    z.object({
      ttl: z
        .number()
        .int()
        .min(1)
        .max(TTL_MAX[timeframe], {
          message: 'ttl exceeds the maximum for its timeframe (457 years, 1200 months, 36500 days)',
        }),
      timeframe: z.literal(timeframe),
    }),
  ) as unknown as [z.ZodObject<{ ttl: z.ZodNumber; timeframe: z.ZodLiteral<'year' | 'month' | 'day'> }>],
);

const propertiesSchema = z.object({
  prefix: z
    .string()
    .trim()
    .max(32)
    .regex(/^[^\s]*$/, { message: 'Prefix cannot contain spaces' })
    .nullish()
    .transform((p) => (p ? p : null)),
  expires: expires.nullish(),
  activations: z.object({ limit: z.number().int().min(1).max(50), enable_customer_admin: z.boolean() }).nullish(),
  limit_usage: z.number().int().min(1).max(2_147_483_647).nullish(),
});

export const licenseKeysStrategy: BenefitTypeStrategy<z.output<typeof propertiesSchema>> = {
  type: 'license_keys',
  propertiesSchema,
  readPropertiesSchema: z.object({
    prefix: z.string().nullable(),
    expires: z.object({ ttl: z.number().int(), timeframe: z.enum(['year', 'month', 'day']) }).nullable(),
    activations: z.object({ limit: z.number().int(), enable_customer_admin: z.boolean() }).nullable(),
    limit_usage: z.number().int().nullable(),
  }),
  async validateProperties(_ctx, input) {
    const stored: LicenseKeysBenefitProperties = {
      prefix: input.prefix ?? null,
      expires: input.expires ?? null,
      activations: input.activations ?? null,
      limit_usage: input.limit_usage ?? null,
    };
    return { ...stored };
  },
  serializeProperties(stored) {
    return {
      prefix: (stored.prefix as string | null) ?? null,
      expires: (stored.expires as LicenseKeysBenefitProperties['expires']) ?? null,
      activations: (stored.activations as LicenseKeysBenefitProperties['activations']) ?? null,
      limit_usage: (stored.limit_usage as number | null) ?? null,
    };
  },
  requiresUpdate(previous, current) {
    return !sameJson(previous, current);
  },
  async grant(ctx, { benefit, customer, grantProperties, update }) {
    const existingId = grantProperties.license_key_id as string | undefined;
    const existing = existingId ? await ctx.em.findOne(LicenseKey, { id: existingId, customer, benefit }) : null;
    let key: LicenseKey;
    if (existing) {
      key = existing;
      key.status = 'granted';
      if (update) Object.assign(key, licenseKeyLimits(benefit.properties as unknown as LicenseKeysBenefitProperties));
      await ctx.em.flush();
    } else {
      // Its id now, so the key and the grant that names it are inserted by the caller's flush (the
      // grant in one INSERT, not an INSERT and then an UPDATE with the key's id).
      key = issueLicenseKey(ctx.em, { customer, benefit });
      key.id ??= randomUUID();
    }
    return { license_key_id: key.id, display_key: key.displayKey };
  },
  async revoke(ctx, { benefit, customer, grantProperties }) {
    const id = grantProperties.license_key_id as string | undefined;
    const key = id ? await ctx.em.findOne(LicenseKey, { id, customer, benefit }) : null;
    if (key) {
      key.status = 'revoked';
      await ctx.em.flush();
    }
    return grantProperties;
  },
};
