/**
 * Organizations: one entity serves both the seller profile (/v1) and the Better Auth organization
 * plugin (/api/auth/organization/*: `logo` is `avatarUrl`, `metadata` is the plugin's metadata).
 * Members, teams, invitations and API access tokens belong to an organization.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties, type Metadata } from '../../kit/entity.ts';
import { User } from '../../auth/entities.ts';

export interface ProfileSettings {
  enabled?: boolean | null;
  description?: string | null;
  featured_projects?: string[] | null;
  featured_organizations?: string[] | null;
  links?: string[] | null;
  subscribe?: { promote?: boolean; show_count?: boolean; count_free?: boolean } | null;
  accent_color?: string | null;
}

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
    detailsSubmittedAt: p.datetime().nullable(),
    featureSettings: p.json<Record<string, unknown>>(),
    subscriptionSettings: p.json<Record<string, unknown>>(),
    profileSettings: p.json<ProfileSettings>().nullable(),
    metadata: p.json<Metadata>(),
    bio: p.text().nullable(),
    company: p.string().nullable(),
    blog: p.string().nullable(),
    location: p.string().nullable(),
    twitterUsername: p.string().nullable(),
    billingEmail: p.string().nullable(),
    pledgeMinimumAmount: p.integer().default(2000),
    pledgeBadgeShowAmount: p.boolean().default(false),
    defaultUpfrontSplitToContributors: p.integer().nullable(),
    defaultBadgeCustomContent: p.text().nullable(),
    totalMonthlySpendingLimit: p.integer().nullable(),
    perUserMonthlySpendingLimit: p.integer().nullable(),
  },
});
export type Organization = InferEntity<typeof Organization>;

/** A team inside an organization (Better Auth teams); `modifiedAt` is the plugin's `updatedAt`. */
export const Team = defineEntity({
  name: 'Team',
  tableName: 'teams',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
  },
});
export type Team = InferEntity<typeof Team>;

export const Member = defineEntity({
  name: 'Member',
  tableName: 'members',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    /** One or more of owner, admin, member; comma-separated. */
    role: p.string().default('member'),
    team: () => p.manyToOne(Team).nullable().deleteRule('set null').index(),
  },
  uniques: [{ properties: ['organization', 'user'] }],
});
export type Member = InferEntity<typeof Member>;

export const INVITATION_STATUSES = ['pending', 'accepted', 'rejected', 'canceled'] as const;
export type InvitationStatus = (typeof INVITATION_STATUSES)[number];

/** An invitation by email; pending only while unexpired. */
export const Invitation = defineEntity({
  name: 'Invitation',
  tableName: 'invitations',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    email: p.string().index(),
    role: p.string(),
    status: p.enum(INVITATION_STATUSES).default('pending'),
    team: () => p.manyToOne(Team).nullable().deleteRule('set null'),
    inviter: () => p.manyToOne(User).deleteRule('cascade'),
    expiresAt: p.datetime(),
  },
});
export type Invitation = InferEntity<typeof Invitation>;

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
