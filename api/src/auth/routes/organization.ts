/**
 * The Better Auth organization plugin (with teams): organizations, members, invitations and teams under
 * /api/auth/organization/*. The organization is the same row the seller API (/v1/organizations) serves.
 */
import type { Router } from 'express';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { Session, User } from '../entities.ts';
import { AUTH_ERRORS, AuthError, ORG_ERRORS } from '../errors.ts';
import { deliver, endpoint, parseBody, parseQuery, requireSession, setActiveOrganization, type AuthContext } from '../http.ts';
import { invitationMail } from '../mail-templates.ts';
import type { LoadedSession } from '../sessions.ts';
import { Invitation, Member, Organization, Team } from '../../modules/organizations/entities.ts';
import {
  CREATOR_ROLE,
  INVITATION_LIMIT,
  INVITATION_TTL_SECONDS,
  MEMBERSHIP_LIMIT,
  baInvitation,
  baMember,
  baOrganization,
  baTeam,
  findMember,
  fullOrganization,
  hasPermission,
  hasRole,
  isKnownRole,
  isPending,
  isUuid,
  organizationsOf,
  parseRoles,
  pendingInvitations,
} from '../../modules/organizations/membership.ts';
import { createOrganizationWithOwner, emitOrganizationUpdated } from '../../modules/organizations/service.ts';
import { slugSchema } from '../../modules/organizations/schemas.ts';

const roleInput = z.union([z.string(), z.array(z.string())]);
const metadataInput = z.record(z.string(), z.unknown());

/** The organization a request acts on: the one named, else the session's active one. */
function targetOrganization(s: LoadedSession, requested: string | null | undefined): string | null {
  return requested || s.session.activeOrganizationId || null;
}

async function loadOrganization(em: EntityManager, id: string): Promise<Organization | null> {
  return isUuid(id) ? em.findOne(Organization, { id }) : null;
}

/** Clears the active organization of a user's sessions that point at it (removal, leaving, deletion). */
async function clearActiveFor(em: EntityManager, organizationId: string, userId?: string) {
  await em.nativeUpdate(
    Session,
    { activeOrganizationId: organizationId, ...(userId ? { user: userId } : {}) },
    { activeOrganizationId: null },
  );
}

async function ownerCount(em: EntityManager, organizationId: string): Promise<number> {
  const members = await em.find(Member, { organization: organizationId }, { fields: ['role'] });
  return members.filter((m) => hasRole(m.role, CREATOR_ROLE)).length;
}

function checkRoles(role: string) {
  if (!isKnownRole(role)) throw ORG_ERRORS.ROLE_NOT_FOUND();
}

export function organizationRoutes(router: Router, deps: Deps) {
  const { cfg } = deps;
  const post = (path: string, h: (ctx: AuthContext) => Promise<unknown>) => endpoint(router, deps, 'post', path, h);
  const get = (path: string, h: (ctx: AuthContext) => Promise<unknown>) => endpoint(router, deps, 'get', path, h);

  // ---- organizations ------------------------------------------------------------------------------

  post('/organization/create', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({
        name: z.string().trim().min(1),
        slug: slugSchema,
        userId: z.string().optional(),
        logo: z.string().optional(),
        metadata: metadataInput.optional(),
        keepCurrentActiveOrganization: z.boolean().optional(),
      }),
      ctx.req,
    );
    // Creating for another user is for server calls; over HTTP the caller is always the creator.
    if (await ctx.em.count(Organization, { slug: body.slug })) throw ORG_ERRORS.ORGANIZATION_ALREADY_EXISTS();
    let created: Awaited<ReturnType<typeof createOrganizationWithOwner>>;
    try {
      created = await createOrganizationWithOwner(ctx.em, me.user, {
        name: body.name,
        slug: body.slug,
        avatarUrl: body.logo ?? null,
        metadata: (body.metadata ?? {}) as Organization['metadata'],
      });
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw ORG_ERRORS.ORGANIZATION_ALREADY_EXISTS();
      throw err;
    }
    if (!body.keepCurrentActiveOrganization) await setActiveOrganization(ctx, me, created.organization.id);
    return { ...baOrganization(created.organization, 'object'), members: [baMember(created.member)] };
  });

  post('/organization/check-slug', async (ctx) => {
    await requireSession(ctx);
    const { slug } = parseBody(z.object({ slug: z.string() }), ctx.req);
    if (await ctx.em.count(Organization, { slug })) throw ORG_ERRORS.SLUG_IS_TAKEN();
    return { status: true };
  });

  post('/organization/update', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({
        data: z
          .object({ name: z.string().trim().min(1), slug: slugSchema, logo: z.string().nullable(), metadata: metadataInput.nullable() })
          .partial(),
        organizationId: z.string().optional(),
      }),
      ctx.req,
    );
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.ORGANIZATION_NOT_FOUND();
    const member = await findMember(ctx.em, orgId, me.user.id);
    if (!member) throw ORG_ERRORS.USER_IS_NOT_A_MEMBER();
    if (!hasPermission(member.role, { organization: ['update'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_ORGANIZATION();
    const org = member.organization;
    const { data } = body;
    if (data.slug && data.slug !== org.slug && (await ctx.em.count(Organization, { slug: data.slug }))) {
      throw ORG_ERRORS.ORGANIZATION_ALREADY_EXISTS();
    }
    if (data.name !== undefined) org.name = data.name;
    if (data.slug !== undefined) org.slug = data.slug;
    if (data.logo !== undefined) org.avatarUrl = data.logo;
    if (data.metadata !== undefined) org.metadata = (data.metadata ?? {}) as Organization['metadata'];
    emitOrganizationUpdated(ctx.em, org);
    try {
      await ctx.em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw ORG_ERRORS.ORGANIZATION_ALREADY_EXISTS();
      throw err;
    }
    return baOrganization(org, 'object');
  });

  post('/organization/delete', async (ctx) => {
    const me = await requireSession(ctx);
    const { organizationId } = parseBody(z.object({ organizationId: z.string() }), ctx.req);
    const member = await findMember(ctx.em, organizationId, me.user.id);
    if (!member) throw ORG_ERRORS.USER_IS_NOT_A_MEMBER();
    if (!hasPermission(member.role, { organization: ['delete'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_DELETE_ORGANIZATION();
    const shown = baOrganization(member.organization, 'text');
    await clearActiveFor(ctx.em, organizationId);
    if (me.session.activeOrganizationId === organizationId) await setActiveOrganization(ctx, me, null);
    await ctx.em.nativeDelete(Organization, { id: organizationId });
    return shown;
  });

  get('/organization/list', async (ctx) => {
    const me = await requireSession(ctx);
    return (await organizationsOf(ctx.em, me.user.id)).map((o) => baOrganization(o, 'text'));
  });

  get('/organization/get-full-organization', async (ctx) => {
    const me = await requireSession(ctx);
    const q = parseQuery(z.object({ organizationId: z.string().optional(), organizationSlug: z.string().optional() }), ctx.req);
    let org: Organization | null;
    if (q.organizationSlug) org = await ctx.em.findOne(Organization, { slug: q.organizationSlug });
    else {
      const id = targetOrganization(me, q.organizationId);
      if (!id) return null;
      org = await loadOrganization(ctx.em, id);
    }
    const member = org ? await findMember(ctx.em, org.id, me.user.id) : null;
    if (!org || !member) {
      // The active organization is gone or no longer ours: clear it.
      if (!q.organizationId && !q.organizationSlug) await setActiveOrganization(ctx, me, null);
      throw ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN();
    }
    return fullOrganization(ctx.em, org);
  });

  post('/organization/set-active', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({ organizationId: z.string().nullable().optional(), organizationSlug: z.string().optional() }),
      ctx.req,
    );
    if (body.organizationId === null && !body.organizationSlug) {
      if (me.session.activeOrganizationId) await setActiveOrganization(ctx, me, null);
      return null;
    }
    let org: Organization | null;
    if (body.organizationSlug) org = await ctx.em.findOne(Organization, { slug: body.organizationSlug });
    else {
      const id = body.organizationId || me.session.activeOrganizationId;
      if (!id) return null;
      org = await loadOrganization(ctx.em, id);
    }
    const member = org ? await findMember(ctx.em, org.id, me.user.id) : null;
    if (!org || !member) {
      if (me.session.activeOrganizationId) await setActiveOrganization(ctx, me, null);
      throw ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN();
    }
    await setActiveOrganization(ctx, me, org.id);
    return fullOrganization(ctx.em, org);
  });

  post('/organization/has-permission', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({
        organizationId: z.string().optional(),
        permission: z.record(z.string(), z.array(z.string())).optional(),
        permissions: z.record(z.string(), z.array(z.string())).optional(),
      }),
      ctx.req,
    );
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const member = await findMember(ctx.em, orgId, me.user.id);
    if (!member) throw new AuthError(401, 'User is not a member of the organization');
    return { error: null, success: hasPermission(member.role, body.permissions ?? body.permission ?? {}) };
  });

  // ---- members --------------------------------------------------------------------------------------
  // add-member is server-only (`addMember` in ../server-api.ts): not routed, so a 404 as in Better Auth.

  get('/organization/get-active-member', async (ctx) => {
    const me = await requireSession(ctx);
    const orgId = me.session.activeOrganizationId;
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const member = await findMember(ctx.em, orgId, me.user.id);
    if (!member) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    return baMember(member, true);
  });

  get('/organization/list-members', async (ctx) => {
    const me = await requireSession(ctx);
    const q = parseQuery(
      z.object({
        organizationId: z.string().optional(),
        limit: z.coerce.number().int().min(1).optional(),
        offset: z.coerce.number().int().min(0).optional(),
      }),
      ctx.req,
    );
    const orgId = targetOrganization(me, q.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    if (!(await findMember(ctx.em, orgId, me.user.id))) throw ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN();
    const [members, total] = await ctx.em.findAndCount(
      Member,
      { organization: orgId },
      {
        populate: ['user'],
        orderBy: { createdAt: 'asc' },
        limit: Math.min(q.limit ?? MEMBERSHIP_LIMIT, MEMBERSHIP_LIMIT),
        offset: q.offset ?? 0,
      },
    );
    return { members: members.map((m) => baMember(m, true)), total };
  });

  post('/organization/remove-member', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(z.object({ memberIdOrEmail: z.string(), organizationId: z.string().optional() }), ctx.req);
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const actor = await findMember(ctx.em, orgId, me.user.id);
    if (!actor) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    let target: Member | null = null;
    if (body.memberIdOrEmail.includes('@')) {
      const user = await ctx.em.findOne(User, { email: body.memberIdOrEmail.trim().toLowerCase() });
      target = user ? await findMember(ctx.em, orgId, user.id) : null;
    } else if (isUuid(body.memberIdOrEmail)) {
      target = await ctx.em.findOne(Member, { id: body.memberIdOrEmail, organization: orgId }, { populate: ['user'] });
    }
    if (!target) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    if (!hasPermission(actor.role, { member: ['delete'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_DELETE_MEMBER();
    if (hasRole(target.role, CREATOR_ROLE)) {
      // Only an owner removes an owner, and never the last one.
      if (!hasRole(actor.role, CREATOR_ROLE)) throw ORG_ERRORS.NOT_ALLOWED_TO_DELETE_MEMBER();
      if ((await ownerCount(ctx.em, orgId)) <= 1) throw ORG_ERRORS.CANNOT_LEAVE_AS_ONLY_OWNER();
    }
    const shown = baMember(target, true);
    await ctx.em.nativeDelete(Member, { id: target.id });
    await clearActiveFor(ctx.em, orgId, target.user.id);
    if (target.user.id === me.user.id && me.session.activeOrganizationId === orgId) await setActiveOrganization(ctx, me, null);
    return { member: shown };
  });

  post('/organization/update-member-role', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({ role: roleInput, memberId: z.string(), organizationId: z.string().optional() }),
      ctx.req,
    );
    const role = parseRoles(body.role);
    if (!role) throw AUTH_ERRORS.VALIDATION_BODY();
    checkRoles(role);
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const actor = await findMember(ctx.em, orgId, me.user.id);
    if (!actor) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    const target = isUuid(body.memberId)
      ? await ctx.em.findOne(Member, { id: body.memberId, organization: orgId }, { populate: ['user'] })
      : null;
    if (!target) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    if (!hasPermission(actor.role, { member: ['update'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_MEMBER();
    const actorIsOwner = hasRole(actor.role, CREATOR_ROLE);
    if (!actorIsOwner && (hasRole(target.role, CREATOR_ROLE) || hasRole(role, CREATOR_ROLE))) {
      throw ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_MEMBER();
    }
    if (hasRole(target.role, CREATOR_ROLE) && !hasRole(role, CREATOR_ROLE) && (await ownerCount(ctx.em, orgId)) <= 1) {
      throw ORG_ERRORS.CANNOT_LEAVE_AS_ONLY_OWNER();
    }
    target.role = role;
    await ctx.em.flush();
    return baMember(target, true);
  });

  post('/organization/leave', async (ctx) => {
    const me = await requireSession(ctx);
    const { organizationId } = parseBody(z.object({ organizationId: z.string() }), ctx.req);
    const member = await findMember(ctx.em, organizationId, me.user.id);
    if (!member) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    if (hasRole(member.role, CREATOR_ROLE) && (await ownerCount(ctx.em, organizationId)) <= 1) {
      throw ORG_ERRORS.CANNOT_LEAVE_AS_ONLY_OWNER();
    }
    const shown = baMember(member, true);
    await ctx.em.nativeDelete(Member, { id: member.id });
    await clearActiveFor(ctx.em, organizationId, me.user.id);
    if (me.session.activeOrganizationId === organizationId) await setActiveOrganization(ctx, me, null);
    return shown;
  });

  // ---- invitations ----------------------------------------------------------------------------------

  post('/organization/invite-member', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({
        email: z.string(),
        role: roleInput,
        organizationId: z.string().optional(),
        resend: z.boolean().optional(),
        teamId: z.string().optional(),
      }),
      ctx.req,
    );
    const email = z.email().safeParse(body.email.trim().toLowerCase());
    if (!email.success) throw AUTH_ERRORS.INVALID_EMAIL();
    const role = parseRoles(body.role);
    checkRoles(role);
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.ORGANIZATION_NOT_FOUND();
    const actor = await findMember(ctx.em, orgId, me.user.id);
    if (!actor) throw ORG_ERRORS.MEMBER_NOT_FOUND();
    if (!hasPermission(actor.role, { invitation: ['create'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_INVITE();
    if (!hasRole(actor.role, CREATOR_ROLE) && hasRole(role, CREATOR_ROLE)) throw ORG_ERRORS.NOT_ALLOWED_TO_INVITE_WITH_ROLE();
    const invitee = await ctx.em.findOne(User, { email: email.data });
    if (invitee && (await findMember(ctx.em, orgId, invitee.id))) throw ORG_ERRORS.USER_IS_ALREADY_A_MEMBER();
    let team: Team | null = null;
    if (body.teamId) {
      team = isUuid(body.teamId) ? await ctx.em.findOne(Team, { id: body.teamId, organization: orgId }) : null;
      if (!team) throw ORG_ERRORS.TEAM_NOT_FOUND();
    }
    const org = actor.organization;

    const existing = await pendingInvitations(ctx.em, orgId, email.data);
    let invitation: Invitation;
    if (existing.length) {
      if (!body.resend) throw ORG_ERRORS.USER_IS_ALREADY_INVITED();
      // Resend: the same invitation, renewed, with the role and team asked for now.
      invitation = existing[0]!;
      invitation.role = role;
      invitation.team = team;
      invitation.inviter = me.user;
      invitation.expiresAt = new Date(Date.now() + INVITATION_TTL_SECONDS * 1000);
    } else {
      if ((await pendingInvitations(ctx.em, orgId)).length >= INVITATION_LIMIT) throw ORG_ERRORS.INVITATION_LIMIT_REACHED();
      invitation = ctx.em.create(Invitation, {
        organization: org,
        email: email.data,
        role,
        status: 'pending',
        team,
        inviter: me.user,
        expiresAt: new Date(Date.now() + INVITATION_TTL_SECONDS * 1000),
      });
    }
    await ctx.em.flush();
    const url = `${cfg.PUBLIC_URL.replace(/\/$/, '')}/dashboard/#/accept-invitation/${invitation.id}`;
    deliver(
      ctx,
      invitationMail({
        to: invitation.email,
        inviterName: me.user.name,
        inviterEmail: me.user.email,
        organizationName: org.name,
        role,
        invitationId: invitation.id,
        url,
      }),
    );
    return baInvitation(invitation);
  });

  /** A pending invitation addressed to the caller (400 / 403 otherwise). */
  async function invitationForRecipient(ctx: AuthContext, me: LoadedSession, id: string): Promise<Invitation> {
    const invitation = isUuid(id) ? await ctx.em.findOne(Invitation, { id }, { populate: ['organization', 'inviter'] }) : null;
    if (!invitation || !isPending(invitation)) throw ORG_ERRORS.INVITATION_NOT_FOUND();
    if (invitation.email.toLowerCase() !== me.user.email.toLowerCase()) throw ORG_ERRORS.NOT_THE_RECIPIENT();
    return invitation;
  }

  post('/organization/accept-invitation', async (ctx) => {
    const me = await requireSession(ctx);
    const { invitationId } = parseBody(z.object({ invitationId: z.string() }), ctx.req);
    const invitation = await invitationForRecipient(ctx, me, invitationId);
    // Holding the invited address is what the invitation checks: it must be verified.
    if (!me.user.emailVerified) throw ORG_ERRORS.EMAIL_VERIFICATION_REQUIRED();
    const orgId = invitation.organization.id;
    if ((await ctx.em.count(Member, { organization: orgId })) >= MEMBERSHIP_LIMIT) throw ORG_ERRORS.MEMBERSHIP_LIMIT_REACHED();
    if (await findMember(ctx.em, orgId, me.user.id)) throw ORG_ERRORS.USER_IS_ALREADY_A_MEMBER();
    // Claim the invitation atomically so a double accept creates one member.
    const claimed = await ctx.em.nativeUpdate(Invitation, { id: invitation.id, status: 'pending' }, { status: 'accepted' });
    if (claimed !== 1) throw ORG_ERRORS.INVITATION_NOT_FOUND();
    invitation.status = 'accepted';
    const member = ctx.em.create(Member, {
      organization: invitation.organization,
      user: me.user,
      role: invitation.role,
      team: invitation.team ?? null,
    });
    try {
      await ctx.em.flush();
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw ORG_ERRORS.USER_IS_ALREADY_A_MEMBER();
      throw err;
    }
    await setActiveOrganization(ctx, me, orgId);
    return { invitation: baInvitation(invitation), member: baMember(member) };
  });

  post('/organization/reject-invitation', async (ctx) => {
    const me = await requireSession(ctx);
    const { invitationId } = parseBody(z.object({ invitationId: z.string() }), ctx.req);
    const invitation = await invitationForRecipient(ctx, me, invitationId);
    if (!me.user.emailVerified) throw ORG_ERRORS.EMAIL_VERIFICATION_REQUIRED();
    invitation.status = 'rejected';
    await ctx.em.flush();
    return { invitation: baInvitation(invitation), member: null };
  });

  post('/organization/cancel-invitation', async (ctx) => {
    const me = await requireSession(ctx);
    const { invitationId } = parseBody(z.object({ invitationId: z.string() }), ctx.req);
    const invitation = isUuid(invitationId) ? await ctx.em.findOne(Invitation, { id: invitationId }) : null;
    if (!invitation) throw ORG_ERRORS.INVITATION_NOT_FOUND();
    const actor = await findMember(ctx.em, invitation.organization.id, me.user.id);
    if (!actor) throw ORG_ERRORS.INVITATION_NOT_FOUND();
    if (!hasPermission(actor.role, { invitation: ['cancel'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_CANCEL_INVITATION();
    if (invitation.status !== 'pending') throw ORG_ERRORS.INVITATION_NOT_FOUND();
    invitation.status = 'canceled';
    await ctx.em.flush();
    return baInvitation(invitation);
  });

  get('/organization/get-invitation', async (ctx) => {
    const me = await requireSession(ctx);
    const { id } = parseQuery(z.object({ id: z.string() }), ctx.req);
    const invitation = await invitationForRecipient(ctx, me, id);
    const inviter = await findMember(ctx.em, invitation.organization.id, invitation.inviter.id);
    if (!inviter) throw ORG_ERRORS.INVITER_NO_LONGER_MEMBER();
    return {
      ...baInvitation(invitation),
      organizationName: invitation.organization.name,
      organizationSlug: invitation.organization.slug,
      inviterEmail: inviter.user.email,
    };
  });

  get('/organization/list-invitations', async (ctx) => {
    const me = await requireSession(ctx);
    const q = parseQuery(z.object({ organizationId: z.string().optional() }), ctx.req);
    const orgId = targetOrganization(me, q.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    if (!(await findMember(ctx.em, orgId, me.user.id))) throw ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN();
    const invitations = await ctx.em.find(Invitation, { organization: orgId }, { orderBy: { createdAt: 'asc' } });
    return invitations.map(baInvitation);
  });

  // ---- teams ----------------------------------------------------------------------------------------

  post('/organization/create-team', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(z.object({ name: z.string().trim().min(1), organizationId: z.string().optional() }), ctx.req);
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const actor = await findMember(ctx.em, orgId, me.user.id);
    if (!actor || !hasPermission(actor.role, { team: ['create'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_CREATE_TEAMS();
    const team = ctx.em.create(Team, { organization: actor.organization, name: body.name });
    await ctx.em.flush();
    return baTeam(team);
  });

  post('/organization/update-team', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(
      z.object({ teamId: z.string(), data: z.object({ name: z.string().trim().min(1), organizationId: z.string() }).partial() }),
      ctx.req,
    );
    const team = isUuid(body.teamId) ? await ctx.em.findOne(Team, { id: body.teamId }) : null;
    const actor = team ? await findMember(ctx.em, team.organization.id, me.user.id) : null;
    if (!team || !actor) throw ORG_ERRORS.TEAM_NOT_FOUND();
    if (!hasPermission(actor.role, { team: ['update'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_TEAM();
    if (body.data.name !== undefined) team.name = body.data.name;
    await ctx.em.flush();
    return baTeam(team);
  });

  post('/organization/remove-team', async (ctx) => {
    const me = await requireSession(ctx);
    const body = parseBody(z.object({ teamId: z.string(), organizationId: z.string().optional() }), ctx.req);
    const orgId = targetOrganization(me, body.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    const actor = await findMember(ctx.em, orgId, me.user.id);
    if (!actor || !hasPermission(actor.role, { team: ['delete'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_DELETE_TEAMS();
    const team = isUuid(body.teamId) ? await ctx.em.findOne(Team, { id: body.teamId, organization: orgId }) : null;
    if (!team) throw ORG_ERRORS.TEAM_NOT_FOUND();
    if ((await ctx.em.count(Team, { organization: orgId })) <= 1) throw ORG_ERRORS.UNABLE_TO_REMOVE_LAST_TEAM();
    await ctx.em.nativeDelete(Team, { id: team.id });
    return { message: 'Team removed successfully.' };
  });

  get('/organization/list-teams', async (ctx) => {
    const me = await requireSession(ctx);
    const q = parseQuery(z.object({ organizationId: z.string().optional() }), ctx.req);
    const orgId = targetOrganization(me, q.organizationId);
    if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
    if (!(await findMember(ctx.em, orgId, me.user.id))) throw ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN();
    const teams = await ctx.em.find(Team, { organization: orgId }, { orderBy: { createdAt: 'asc' } });
    return teams.map(baTeam);
  });
}
