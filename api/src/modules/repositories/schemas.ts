/** Wire shapes of repositories and external organizations, as `@polar-sh/sdk` 0.29.3 parses them. */
import { z } from 'zod/v4';
import type { Organization } from '../organizations/entities.ts';
import { organizationSchema, serializeOrganization } from '../organizations/schemas.ts';
import { PLATFORMS, type ExternalOrganization, type Repository, type RepositoryProfileSettings } from './entities.ts';

export const externalOrganizationSchema = z.object({
  id: z.uuid(),
  platform: z.enum(PLATFORMS),
  name: z.string(),
  avatar_url: z.string(),
  is_personal: z.boolean(),
  bio: z.string().nullable(),
  pretty_name: z.string().nullable(),
  company: z.string().nullable(),
  blog: z.string().nullable(),
  location: z.string().nullable(),
  email: z.string().nullable(),
  twitter_username: z.string().nullable(),
  organization_id: z.uuid().nullable(),
});

export const repositoryProfileSettingsSchema = z.object({
  description: z.string().nullable(),
  cover_image_url: z.string().nullable(),
  featured_organizations: z.array(z.string()).nullable(),
  highlighted_subscription_tiers: z.array(z.string()).nullable(),
  links: z.array(z.string()).nullable(),
});

/** The SDK-era `Organization` read model embedded as `internal_organization`. */
const internalOrganizationSchema = organizationSchema.extend({
  bio: z.string().nullable(),
  company: z.string().nullable(),
  blog: z.string().nullable(),
  location: z.string().nullable(),
  twitter_username: z.string().nullable(),
  pledge_minimum_amount: z.number().int(),
  pledge_badge_show_amount: z.boolean(),
  default_upfront_split_to_contributors: z.number().int().nullable(),
  profile_settings: z.record(z.string(), z.unknown()).nullable(),
});

export const repositorySchema = z.object({
  id: z.uuid(),
  platform: z.enum(PLATFORMS),
  is_private: z.boolean(),
  name: z.string(),
  description: z.string().nullable(),
  stars: z.number().int().nullable(),
  license: z.string().nullable(),
  homepage: z.string().nullable(),
  profile_settings: repositoryProfileSettingsSchema.nullable(),
  organization: externalOrganizationSchema,
  internal_organization: internalOrganizationSchema.nullable(),
});

const url = z.url({ protocol: /^https?$/ }).max(2048);
export const repositoryUpdateSchema = z.object({
  profile_settings: z
    .object({
      set_description: z.boolean().nullish(),
      description: z.string().trim().max(240).nullish(),
      set_cover_image_url: z.boolean().nullish(),
      cover_image_url: url.nullish(),
      featured_organizations: z.array(z.uuid()).max(20).nullish(),
      highlighted_subscription_tiers: z.array(z.uuid()).max(20).nullish(),
      links: z.array(url).max(10).nullish(),
    })
    .nullish(),
});
export type RepositoryUpdate = z.output<typeof repositoryUpdateSchema>;

export function serializeExternalOrganization(o: ExternalOrganization): z.infer<typeof externalOrganizationSchema> {
  return {
    id: o.id,
    platform: o.platform,
    name: o.name,
    avatar_url: o.avatarUrl,
    is_personal: o.isPersonal,
    bio: o.bio ?? null,
    pretty_name: o.prettyName ?? null,
    company: o.company ?? null,
    blog: o.blog ?? null,
    location: o.location ?? null,
    email: o.email ?? null,
    twitter_username: o.twitterUsername ?? null,
    organization_id: o.organization?.id ?? null,
  };
}

/** SDK-era `Organization` keys, for when the organizations read model does not carry them. */
const ORGANIZATION_PROFILE_DEFAULTS = {
  bio: null,
  company: null,
  blog: null,
  location: null,
  twitter_username: null,
  pledge_minimum_amount: 2000,
  pledge_badge_show_amount: false,
  default_upfront_split_to_contributors: null,
  profile_settings: null,
};

/** The organization read model as the SDK's `Organization`; whatever the organizations module returns wins. */
export function serializeInternalOrganization(o: Organization): z.infer<typeof internalOrganizationSchema> {
  return { ...ORGANIZATION_PROFILE_DEFAULTS, ...serializeOrganization(o) };
}

export function serializeProfileSettings(s: Partial<RepositoryProfileSettings> | null | undefined) {
  return {
    description: s?.description ?? null,
    cover_image_url: s?.cover_image_url ?? null,
    featured_organizations: s?.featured_organizations ?? null,
    highlighted_subscription_tiers: s?.highlighted_subscription_tiers ?? null,
    links: s?.links ?? null,
  };
}

/** Needs `externalOrganization` and `organization` populated. */
export function serializeRepository(r: Repository): z.infer<typeof repositorySchema> {
  return {
    id: r.id,
    platform: r.platform,
    is_private: r.isPrivate,
    name: r.name,
    description: r.description ?? null,
    stars: r.stars ?? null,
    license: r.license ?? null,
    homepage: r.homepage ?? null,
    profile_settings: serializeProfileSettings(r.profileSettings),
    organization: serializeExternalOrganization(r.externalOrganization),
    internal_organization: r.organization ? serializeInternalOrganization(r.organization) : null,
  };
}
