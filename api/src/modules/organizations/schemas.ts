/** Wire shapes of organizations and organization access tokens (snake_case, as the public API). */
import { z } from 'zod/v4';
import { ORGANIZATION_TOKEN_SCOPES } from '../../kit/scopes.ts';
import { metadataSchema, money } from '../../kit/validation.ts';
import type { Organization, OrganizationAccessToken } from './entities.ts';

export const SOCIAL_PLATFORMS = ['x', 'github', 'facebook', 'instagram', 'youtube', 'tiktok', 'linkedin', 'other'] as const;
export const SWITCHING_FROM = ['paddle', 'lemon_squeezy', 'gumroad', 'stripe', 'other'] as const;

export const slugSchema = z
  .string()
  .min(3)
  .max(64)
  .regex(/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/, { message: 'Slug must be lowercase letters, digits and dashes' });

const socialsSchema = z.array(z.object({ platform: z.enum(SOCIAL_PLATFORMS), url: z.url() }));

export const detailsSchema = z.object({
  about: z.string(),
  product_description: z.string(),
  intended_use: z.string(),
  customer_acquisition: z.array(z.string()),
  future_annual_revenue: z.number().int().min(0),
  switching: z.boolean().default(true),
  switching_from: z.enum(SWITCHING_FROM).nullish(),
  previous_annual_revenue: z.number().int().min(0).default(0),
});

const featureSettingsSchema = z.object({ issue_funding_enabled: z.boolean().default(false) }).partial();

const subscriptionSettingsSchema = z
  .object({
    allow_multiple_subscriptions: z.boolean(),
    allow_customer_updates: z.boolean(),
    proration_behavior: z.enum(['invoice', 'prorate']),
  })
  .partial();

export const profileSettingsSchema = z.object({
  enabled: z.boolean().nullish(),
  description: z.string().max(160).nullish(),
  featured_projects: z.array(z.string()).nullish(),
  featured_organizations: z.array(z.string()).nullish(),
  links: z.array(z.url()).nullish(),
  subscribe: z
    .object({ promote: z.boolean().optional(), show_count: z.boolean().optional(), count_free: z.boolean().optional() })
    .nullish(),
  accent_color: z.string().nullish(),
});

/** The profile fields a create and an update both take. */
const profileFields = {
  avatar_url: z.url().nullish(),
  email: z.email().max(255).nullish(),
  website: z.url().nullish(),
  socials: socialsSchema.nullish(),
  details: detailsSchema.nullish(),
  feature_settings: featureSettingsSchema.nullish(),
  subscription_settings: subscriptionSettingsSchema.nullish(),
};

export const organizationCreateSchema = z.object({
  name: z.string().trim().min(3).max(128),
  slug: slugSchema,
  ...profileFields,
  metadata: metadataSchema.optional(),
});

/** PATCH /v1/organizations/{id}: every field optional (SPEC section 3, "Organization update"). */
export const organizationUpdateSchema = z.object({
  name: z.string().trim().min(3).max(128).nullish(),
  ...profileFields,
  default_upfront_split_to_contributors: z.number().int().min(0).max(100).nullish(),
  pledge_badge_show_amount: z.boolean().optional(),
  billing_email: z.email().max(255).nullish(),
  default_badge_custom_content: z.string().nullish(),
  pledge_minimum_amount: money().optional(),
  total_monthly_spending_limit: money().nullish(),
  per_user_monthly_spending_limit: money().nullish(),
  profile_settings: profileSettingsSchema.nullish(),
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
  bio: z.string().nullable(),
  company: z.string().nullable(),
  blog: z.string().nullable(),
  location: z.string().nullable(),
  email: z.string().nullable(),
  twitter_username: z.string().nullable(),
  website: z.string().nullable(),
  socials: z.array(z.object({ platform: z.string(), url: z.string() })),
  details_submitted_at: z.string().nullable(),
  pledge_minimum_amount: z.number().int(),
  pledge_badge_show_amount: z.boolean(),
  default_upfront_split_to_contributors: z.number().int().nullable(),
  profile_settings: z.record(z.string(), z.unknown()).nullable(),
  feature_settings: z.record(z.string(), z.unknown()),
  subscription_settings: z.record(z.string(), z.unknown()),
});

export type OrganizationRead = z.infer<typeof organizationSchema>;
export function serializeOrganization(o: Organization): OrganizationRead {
  return {
    id: o.id,
    created_at: o.createdAt.toISOString(),
    modified_at: o.modifiedAt?.toISOString() ?? null,
    name: o.name,
    slug: o.slug,
    avatar_url: o.avatarUrl ?? null,
    bio: o.bio ?? null,
    company: o.company ?? null,
    blog: o.blog ?? null,
    location: o.location ?? null,
    email: o.email ?? null,
    twitter_username: o.twitterUsername ?? null,
    website: o.website ?? null,
    socials: o.socials,
    details_submitted_at: o.detailsSubmittedAt?.toISOString() ?? null,
    pledge_minimum_amount: o.pledgeMinimumAmount ?? 2000,
    pledge_badge_show_amount: o.pledgeBadgeShowAmount ?? false,
    default_upfront_split_to_contributors: o.defaultUpfrontSplitToContributors ?? null,
    profile_settings: (o.profileSettings as Record<string, unknown> | null | undefined) ?? null,
    feature_settings: { issue_funding_enabled: false, ...o.featureSettings },
    subscription_settings: { ...DEFAULT_SUBSCRIPTION_SETTINGS, ...o.subscriptionSettings },
  };
}

/** A scope an organization access token may hold (listed in the document; checked by the route). */
const tokenScope = z.string().meta({ enum: [...ORGANIZATION_TOKEN_SCOPES] });

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
  scopes: z.array(tokenScope).min(1),
});

export const accessTokenUpdateSchema = z.object({
  comment: z.string().max(255).nullish(),
  scopes: z.array(tokenScope).min(1).nullish(),
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
