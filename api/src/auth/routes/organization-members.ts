/**
 * The Better Auth organization plugin, members: get-active-member, list-members, remove-member,
 * update-member-role and leave. add-member is server-only (`addMember` in ../server-api.ts): not
 * routed, so a 404 as in Better Auth.
 */
import { z } from 'zod/v4';
import { User } from '../entities.ts';
import { AUTH_ERRORS, ORG_ERRORS } from '../errors.ts';
import { authEndpoint, setActiveOrganization, type AuthEndpoint } from '../http.ts';
import { Member } from '../../modules/organizations/entities.ts';
import {
  CREATOR_ROLE,
  MEMBERSHIP_LIMIT,
  baMember,
  findMember,
  hasPermission,
  hasRole,
  isUuid,
  parseRoles,
} from '../../modules/organizations/membership.ts';
import { clearActiveFor, ownerCount } from '../../modules/organizations/membership-rules.ts';
import { checkRoles, roleInput, requireMember, activeOrganization } from './organization-shared.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

export const memberEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'get',
    path: '/organization/get-active-member',
    session: 'session',
    handler: async (ctx) => {
      const { me } = ctx;
      const orgId = me.session.activeOrganizationId;
      if (!orgId) throw ORG_ERRORS.NO_ACTIVE_ORGANIZATION();
      return baMember(await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.MEMBER_NOT_FOUND), true);
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/list-members',
    session: 'session',
    query: z.object({
      organizationId: z.string().optional(),
      limit: z.coerce.number().int().min(1).optional(),
      offset: z.coerce.number().int().min(0).optional(),
    }),
    handler: async (ctx) => {
      const { me, query: q } = ctx;
      const orgId = activeOrganization(me, q.organizationId);
      await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN);
      const [members, total] = await findAndCountInOneSnapshot(
        ctx.em,
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/remove-member',
    session: 'session',
    body: z.object({ memberIdOrEmail: z.string(), organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const orgId = activeOrganization(me, body.organizationId);
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/update-member-role',
    session: 'session',
    body: z.object({ role: roleInput, memberId: z.string(), organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const role = parseRoles(body.role);
      if (!role) throw AUTH_ERRORS.VALIDATION_BODY();
      checkRoles(role);
      const orgId = activeOrganization(me, body.organizationId);
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/leave',
    session: 'session',
    body: z.object({ organizationId: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { organizationId } = ctx.body;
      const member = await requireMember(ctx.em, organizationId, me.user.id, ORG_ERRORS.MEMBER_NOT_FOUND);
      if (hasRole(member.role, CREATOR_ROLE) && (await ownerCount(ctx.em, organizationId)) <= 1) {
        throw ORG_ERRORS.CANNOT_LEAVE_AS_ONLY_OWNER();
      }
      const shown = baMember(member, true);
      await ctx.em.nativeDelete(Member, { id: member.id });
      await clearActiveFor(ctx.em, organizationId, me.user.id);
      if (me.session.activeOrganizationId === organizationId) await setActiveOrganization(ctx, me, null);
      return shown;
    },
  }),
];
