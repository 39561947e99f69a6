/** Wire shapes of organizations and organization access tokens (snake_case, as the public API). */
import { z } from 'zod/v4';
import { metadataSchema } from '../../kit/validation.ts';
import type { Organization, OrganizationAccessToken } from './entities.ts';

export const SOCIAL_PLATFORMS = ['x', 'github', 'facebook', 'instagram', 'youtube', 'tiktok', 'linkedin', 'other'] as const;

export const slugSchema = z
  .string()
  .min(3)
  .max(64)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, { message: 'Slug must be lowercase letters, digits and dashes' });

export const organizationCreateSchema = z.object({
  name: z.string().trim().min(3).max(128),
  slug: slugSchema,
  avatar_url: z.url().nullish(),
  email: z.email().nullish(),
  website: z.url().nullish(),
  socials: z.array(z.object({ platform: z.enum(SOCIAL_PLATFORMS), url: z.url() })).nullish(),
  details: z.record(z.string(), z.unknown()).nullish(),
  feature_settings: z.object({ issue_funding_enabled: z.boolean().default(false) }).partial().nullish(),
  subscription_settings: z
    .object({
      allow_multiple_subscriptions: z.boolean(),
      allow_customer_updates: z.boolean(),
      proration_behavior: z.enum(['invoice', 'prorate']),
    })
    .partial()
    .nullish(),
  metadata: metadataSchema.optional(),
});

export const DEFAULT_SUBSCRIPTION_SETTINGS = {
  allow_multiple_subscriptions: false,
  allow_customer_updates: true,
  proration_behavior: 'prorate',
};

export const organizationSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  name: z.string(),
  slug: z.string(),
  avatar_url: z.string().nullable(),
  email: z.string().nullable(),
  website: z.string().nullable(),
  socials: z.array(z.object({ platform: z.string(), url: z.string() })),
  details_submitted_at: z.string().nullable(),
  feature_settings: z.record(z.string(), z.unknown()),
  subscription_settings: z.record(z.string(), z.unknown()),
});

export function serializeOrganization(o: Organization): z.infer<typeof organizationSchema> {
  return {
    id: o.id,
    created_at: o.createdAt.toISOString(),
    modified_at: o.modifiedAt?.toISOString() ?? null,
    name: o.name,
    slug: o.slug,
    avatar_url: o.avatarUrl ?? null,
    email: o.email ?? null,
    website: o.website ?? null,
    socials: o.socials,
    details_submitted_at: null,
    feature_settings: { issue_funding_enabled: false, ...o.featureSettings },
    subscription_settings: { ...DEFAULT_SUBSCRIPTION_SETTINGS, ...o.subscriptionSettings },
  };
}

export const accessTokenCreateSchema = z.object({
  organization_id: z.uuid().nullish(),
  comment: z.string().max(255).default(''),
  expires_in: z
    .number()
    .int()
    .min(60)
    .max(10 * 365 * 24 * 3600)
    .nullish()
    .describe('Lifetime in seconds; omitted means no expiry'),
  scopes: z.array(z.string()).min(1),
});

export const accessTokenSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  organization_id: z.uuid(),
  comment: z.string(),
  scopes: z.array(z.string()),
  expires_at: z.string().nullable(),
  last_used_at: z.string().nullable(),
});

export function serializeAccessToken(t: OrganizationAccessToken): z.infer<typeof accessTokenSchema> {
  return {
    id: t.id,
    created_at: t.createdAt.toISOString(),
    modified_at: t.modifiedAt?.toISOString() ?? null,
    organization_id: t.organization.id,
    comment: t.comment,
    scopes: t.scopes,
    expires_at: t.expiresAt?.toISOString() ?? null,
    last_used_at: t.lastUsedAt?.toISOString() ?? null,
  };
}
