/** Organizations (sellers), their members and their API access tokens. */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { User } from '../../auth/entities.ts';

export const Organization = defineEntity({
  name: 'Organization',
  tableName: 'organizations',
  properties: {
    ...baseProperties,
    name: p.string(),
    slug: p.string().unique(),
    avatarUrl: p.text().nullable(),
    email: p.string().nullable(),
    website: p.text().nullable(),
    socials: p.json<{ platform: string; url: string }[]>(),
    details: p.json<Record<string, unknown>>().nullable(),
    featureSettings: p.json<Record<string, unknown>>(),
    subscriptionSettings: p.json<Record<string, unknown>>(),
    metadata: p.json<Metadata>(),
  },
});
export type Organization = InferEntity<typeof Organization>;

export const Member = defineEntity({
  name: 'Member',
  tableName: 'members',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    /** One or more of owner, admin, member; comma-separated. */
    role: p.string().default('member'),
  },
  uniques: [{ properties: ['organization', 'user'] }],
});
export type Member = InferEntity<typeof Member>;

/** `polar_oat_…` bearer tokens acting for one organization. Only the SHA-256 is stored. */
export const OrganizationAccessToken = defineEntity({
  name: 'OrganizationAccessToken',
  tableName: 'organization_access_tokens',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    comment: p.string().default(''),
    tokenHash: p.string().unique().hidden(),
    scopes: p.array(),
    expiresAt: p.datetime().nullable(),
    lastUsedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
  },
});
export type OrganizationAccessToken = InferEntity<typeof OrganizationAccessToken>;
