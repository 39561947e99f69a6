/**
 * The Better Auth organization plugin, invitations: invite-member (mailed), accept, reject, cancel,
 * get-invitation and list-invitations.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { User } from '../entities.ts';
import { AUTH_ERRORS, ORG_ERRORS } from '../errors.ts';
import { authEndpoint, deliver, setActiveOrganization, type AuthContext, type AuthEndpoint } from '../http.ts';
import { invitationMail } from '../mail-templates.ts';
import type { LoadedSession } from '../sessions.ts';
import { Invitation, Member, Team } from '../../modules/organizations/entities.ts';
import {
  CREATOR_ROLE,
  INVITATION_LIMIT,
  INVITATION_TTL_SECONDS,
  MEMBERSHIP_LIMIT,
  baInvitation,
  baMember,
  findMember,
  hasRole,
  isPending,
  isUuid,
  parseRoles,
  pendingInvitations,
} from '../../modules/organizations/membership.ts';
import { checkRoles, roleInput, requireMember, targetOrganization, activeOrganization } from './organization-shared.ts';

/** A pending invitation addressed to the caller (400 / 403 otherwise). */
async function invitationForRecipient(ctx: AuthContext, me: LoadedSession, id: string): Promise<Invitation> {
  const invitation = isUuid(id) ? await ctx.em.findOne(Invitation, { id }, { populate: ['organization', 'inviter'] }) : null;
  if (!invitation || !isPending(invitation)) throw ORG_ERRORS.INVITATION_NOT_FOUND();
  if (invitation.email.toLowerCase() !== me.user.email.toLowerCase()) throw ORG_ERRORS.NOT_THE_RECIPIENT();
  return invitation;
}

/** An invitation its recipient acts on: holding the invited address is what it checks, so it must be verified. */
async function invitationForVerifiedRecipient(ctx: AuthContext, me: LoadedSession, id: string): Promise<Invitation> {
  const invitation = await invitationForRecipient(ctx, me, id);
  if (!me.user.emailVerified) throw ORG_ERRORS.EMAIL_VERIFICATION_REQUIRED();
  return invitation;
}

export const invitationEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/organization/invite-member',
    session: 'session',
    body: z.object({
      email: z.string(),
      role: roleInput,
      organizationId: z.string().optional(),
      resend: z.boolean().optional(),
      teamId: z.string().optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const email = z.email().safeParse(body.email.trim().toLowerCase());
      if (!email.success) throw AUTH_ERRORS.INVALID_EMAIL();
      const role = parseRoles(body.role);
      checkRoles(role);
      const orgId = targetOrganization(me, body.organizationId);
      if (!orgId) throw ORG_ERRORS.ORGANIZATION_NOT_FOUND();
      const actor = await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.MEMBER_NOT_FOUND, { invitation: ['create'] }, ORG_ERRORS.NOT_ALLOWED_TO_INVITE);
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
      const url = `${ctx.deps.cfg.PUBLIC_URL.replace(/\/$/, '')}/dashboard/#/accept-invitation/${invitation.id}`;
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/accept-invitation',
    session: 'session',
    body: z.object({ invitationId: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { invitationId } = ctx.body;
      const invitation = await invitationForVerifiedRecipient(ctx, me, invitationId);
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/reject-invitation',
    session: 'session',
    body: z.object({ invitationId: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { invitationId } = ctx.body;
      const invitation = await invitationForVerifiedRecipient(ctx, me, invitationId);
      invitation.status = 'rejected';
      await ctx.em.flush();
      return { invitation: baInvitation(invitation), member: null };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/cancel-invitation',
    session: 'session',
    body: z.object({ invitationId: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { invitationId } = ctx.body;
      const invitation = isUuid(invitationId) ? await ctx.em.findOne(Invitation, { id: invitationId }) : null;
      if (!invitation) throw ORG_ERRORS.INVITATION_NOT_FOUND();
      await requireMember(ctx.em, invitation.organization.id, me.user.id, ORG_ERRORS.INVITATION_NOT_FOUND, { invitation: ['cancel'] }, ORG_ERRORS.NOT_ALLOWED_TO_CANCEL_INVITATION);
      if (invitation.status !== 'pending') throw ORG_ERRORS.INVITATION_NOT_FOUND();
      invitation.status = 'canceled';
      await ctx.em.flush();
      return baInvitation(invitation);
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/get-invitation',
    session: 'session',
    query: z.object({ id: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { id } = ctx.query;
      const invitation = await invitationForRecipient(ctx, me, id);
      const inviter = await findMember(ctx.em, invitation.organization.id, invitation.inviter.id);
      if (!inviter) throw ORG_ERRORS.INVITER_NO_LONGER_MEMBER();
      return {
        ...baInvitation(invitation),
        organizationName: invitation.organization.name,
        organizationSlug: invitation.organization.slug,
        inviterEmail: inviter.user.email,
      };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/list-invitations',
    session: 'session',
    query: z.object({ organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, query: q } = ctx;
      const orgId = activeOrganization(me, q.organizationId);
      await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN);
      const invitations = await ctx.em.find(Invitation, { organization: orgId }, { orderBy: { createdAt: 'asc' } });
      return invitations.map(baInvitation);
    },
  }),
];
