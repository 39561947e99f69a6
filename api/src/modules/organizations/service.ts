/**
 * Organization rules used by both surfaces: creation (the caller becomes the owner, in the default
 * team), the seller-profile update, role checks on writes, and the organization.updated event.
 * Services never commit on their own beyond the single flush that makes a creation atomic.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { z } from 'zod/v4';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import type { Metadata } from '../../kit/entity.ts';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import { User } from '../../auth/entities.ts';
import { emitEvent } from '../webhooks/outbox.ts';
import { Member, Organization, Team, type ProfileSettings } from './entities.ts';
import { CREATOR_ROLE, findMember, hasPermission } from './membership.ts';
import { organizationCreationDecision } from './membership-rules.ts';
import { serializeOrganization, type OrganizationRead, type organizationCreateSchema, type organizationUpdateSchema } from './schemas.ts';

export interface NewOrganization {
  name: string;
  slug: string;
  avatarUrl?: string | null;
  email?: string | null;
  website?: string | null;
  socials?: { platform: string; url: string }[];
  details?: Record<string, unknown> | null;
  featureSettings?: Record<string, unknown>;
  subscriptionSettings?: Record<string, unknown>;
  metadata?: Metadata;
}

/** Creates the organization, its default team and the creator's owner membership in one flush. */
export async function createOrganizationWithOwner(em: EntityManager, user: User, data: NewOrganization) {
  const organization = em.create(Organization, {
    name: data.name,
    slug: data.slug,
    avatarUrl: data.avatarUrl ?? null,
    email: data.email ?? null,
    website: data.website ?? null,
    socials: data.socials ?? [],
    details: data.details ?? null,
    detailsSubmittedAt: data.details ? new Date() : null,
    featureSettings: data.featureSettings ?? {},
    subscriptionSettings: data.subscriptionSettings ?? {},
    profileSettings: null,
    metadata: data.metadata ?? {},
  });
  const team = em.create(Team, { organization, name: data.name });
  const member = em.create(Member, { organization, user, role: CREATOR_ROLE, team });
  await em.flush();
  return { organization, team, member };
}

/**
 * POST /v1/organizations/: the same creation policy as /api/auth/organization/create
 * (ORGANIZATION_CREATION and limits), a free slug, and the user as owner.
 */
export async function createOrganizationForUser(
  tx: EntityManager,
  cfg: Config,
  userId: string,
  body: z.output<typeof organizationCreateSchema>,
): Promise<OrganizationRead> {
  const decision = await organizationCreationDecision(tx, cfg, await tx.findOneOrFail(User, userId));
  if (decision === 'not-allowed') throw NotPermitted('You are not allowed to create a new organization');
  if (decision === 'limit-reached') throw NotPermitted('You have reached the maximum number of organizations');
  const slugTaken = () => fieldError(['body', 'slug'], 'An organization with this slug already exists.', 'value_error', body.slug);
  if (await tx.count(Organization, { slug: body.slug })) throw slugTaken();
  try {
    const { organization } = await createOrganizationWithOwner(tx, tx.getReference(User, userId), {
      name: body.name,
      slug: body.slug,
      avatarUrl: body.avatar_url ?? null,
      email: body.email ?? null,
      website: body.website ?? null,
      socials: body.socials ?? [],
      details: body.details ?? null,
      featureSettings: body.feature_settings ?? {},
      subscriptionSettings: body.subscription_settings ?? {},
      metadata: body.metadata ?? {},
    });
    return serializeOrganization(organization);
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw slugTaken();
    throw err;
  }
}

/** PATCH /v1/organizations/:id by an owner, an admin or the organization's token; emits `organization.updated`. */
export async function updateOrganization(
  tx: EntityManager,
  principal: Principal,
  id: string,
  body: z.output<typeof organizationUpdateSchema>,
): Promise<OrganizationRead> {
  const org = await administeredOrganization(tx, principal, id);
  applyOrganizationUpdate(org, body);
  emitOrganizationUpdated(tx, org);
  await tx.flush();
  return serializeOrganization(org);
}

export function emitOrganizationUpdated(em: EntityManager, org: Organization) {
  org.modifiedAt = new Date();
  emitEvent(em, org.id, 'organization.updated', serializeOrganization(org));
}

/**
 * The organization a principal may administer: 404 when it cannot see it, 403 when it is a member
 * without the owner or admin role. An organization token administers its own organization.
 */
export async function administeredOrganization(em: EntityManager, principal: Principal, id: string): Promise<Organization> {
  if (principal.kind === 'organization') {
    if (principal.organizationId !== id) throw ResourceNotFound('Organization not found');
    const org = await em.findOne(Organization, { id });
    if (!org) throw ResourceNotFound('Organization not found');
    return org;
  }
  if (principal.kind !== 'user') throw ResourceNotFound('Organization not found');
  const member = await findMember(em, id, principal.userId);
  if (!member) throw ResourceNotFound('Organization not found');
  if (!hasPermission(member.role, { organization: ['update'] })) {
    throw NotPermitted('Only owners and admins of the organization can do this');
  }
  return member.organization;
}

/** Whether the user is an owner or admin of the organization (a plain member is not). */
export async function isOrganizationAdmin(em: EntityManager, userId: string, organizationId: string): Promise<boolean> {
  const member = await findMember(em, organizationId, userId);
  return !!member && hasPermission(member.role, { organization: ['update'] });
}

export function applyOrganizationUpdate(org: Organization, body: z.output<typeof organizationUpdateSchema>) {
  const set = <K extends keyof typeof body>(key: K, apply: (v: NonNullable<(typeof body)[K]> | null) => void, nullable = true) => {
    const v = body[key];
    if (v === undefined) return;
    if (v === null && !nullable) return;
    apply(v as NonNullable<(typeof body)[K]> | null);
  };
  set('name', (v) => (org.name = v!), false);
  set('avatar_url', (v) => (org.avatarUrl = v));
  set('email', (v) => (org.email = v));
  set('website', (v) => (org.website = v));
  set('socials', (v) => (org.socials = v ?? []));
  set('details', (v) => {
    org.details = v;
    org.detailsSubmittedAt = v ? new Date() : org.detailsSubmittedAt;
  });
  set('feature_settings', (v) => (org.featureSettings = { ...org.featureSettings, ...(v ?? {}) }));
  set('subscription_settings', (v) => (org.subscriptionSettings = { ...org.subscriptionSettings, ...(v ?? {}) }));
  set('default_upfront_split_to_contributors', (v) => (org.defaultUpfrontSplitToContributors = v));
  set('pledge_badge_show_amount', (v) => (org.pledgeBadgeShowAmount = v!), false);
  set('billing_email', (v) => (org.billingEmail = v));
  set('default_badge_custom_content', (v) => (org.defaultBadgeCustomContent = v));
  set('pledge_minimum_amount', (v) => (org.pledgeMinimumAmount = v!), false);
  set('total_monthly_spending_limit', (v) => (org.totalMonthlySpendingLimit = v));
  set('per_user_monthly_spending_limit', (v) => (org.perUserMonthlySpendingLimit = v));
  set('profile_settings', (v) => (org.profileSettings = v ? ({ ...(org.profileSettings ?? {}), ...v } as ProfileSettings) : null));
}
