/**
 * External organizations (e.g. a GitHub account) and their repositories, as stored records; nothing
 * syncs them from the platform yet. `organization` links each to the Emporia organization owning it.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const PLATFORMS = ['github'] as const;

export interface RepositoryProfileSettings {
  description: string | null;
  cover_image_url: string | null;
  featured_organizations: string[] | null;
  highlighted_subscription_tiers: string[] | null;
  links: string[] | null;
}

export const ExternalOrganization = defineEntity({
  name: 'ExternalOrganization',
  tableName: 'external_organizations',
  properties: {
    ...baseProperties,
    platform: p.enum(PLATFORMS),
    /** The account's login on the platform. */
    name: p.string(),
    avatarUrl: p.text(),
    isPersonal: p.boolean().default(false),
    bio: p.text().nullable(),
    prettyName: p.string().nullable(),
    company: p.string().nullable(),
    blog: p.string().nullable(),
    location: p.string().nullable(),
    email: p.string().nullable(),
    twitterUsername: p.string().nullable(),
    organization: () => p.manyToOne(Organization).nullable().deleteRule('set null').index(),
  },
  uniques: [{ properties: ['platform', 'name'] }],
});
export type ExternalOrganization = InferEntity<typeof ExternalOrganization>;

export const Repository = defineEntity({
  name: 'Repository',
  tableName: 'repositories',
  properties: {
    ...baseProperties,
    platform: p.enum(PLATFORMS),
    externalOrganization: () => p.manyToOne(ExternalOrganization).deleteRule('cascade').index(),
    /** The Emporia organization the repository belongs to. */
    organization: () => p.manyToOne(Organization).nullable().deleteRule('set null').index(),
    name: p.string(),
    description: p.text().nullable(),
    stars: p.integer().nullable(),
    license: p.string().nullable(),
    homepage: p.text().nullable(),
    isPrivate: p.boolean().default(false),
    profileSettings: p.json<Partial<RepositoryProfileSettings>>(),
  },
  uniques: [{ properties: ['externalOrganization', 'name'] }],
});
export type Repository = InferEntity<typeof Repository>;
