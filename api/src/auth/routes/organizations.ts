/**
 * The Better Auth organization plugin, organizations: create, check-slug, update, delete, list,
 * get-full-organization, set-active and has-permission under /api/auth/organization/*. The organization
 * is the same row the seller API (/v1/organizations) serves.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { AuthError, ORG_ERRORS } from '../errors.ts';
import { authEndpoint, setActiveOrganization, type AuthEndpoint } from '../http.ts';
import { Organization } from '../../modules/organizations/entities.ts';
import {
  baMember,
  baOrganization,
  findMember,
  fullOrganization,
  hasPermission,
  organizationsOf,
} from '../../modules/organizations/membership.ts';
import { clearActiveFor, loadOrganization, organizationCreationDecision } from '../../modules/organizations/membership-rules.ts';
import { createOrganizationWithOwner, emitOrganizationUpdated } from '../../modules/organizations/service.ts';
import { slugSchema } from '../../modules/organizations/schemas.ts';
import { metadataInput, requireMember, targetOrganization, activeOrganization } from './organization-shared.ts';

export const organizationEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/organization/create',
    session: 'session',
    body: z.object({
      name: z.string().trim().min(1),
      slug: slugSchema,
      userId: z.string().optional(),
      logo: z.string().optional(),
      metadata: metadataInput.optional(),
      keepCurrentActiveOrganization: z.boolean().optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const decision = await organizationCreationDecision(ctx.em, ctx.deps.cfg, me.user);
      if (decision === 'not-allowed') throw ORG_ERRORS.NOT_ALLOWED_TO_CREATE();
      if (decision === 'limit-reached') throw ORG_ERRORS.ORGANIZATION_LIMIT_REACHED();
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/check-slug',
    session: 'session',
    body: z.object({ slug: z.string() }),
    handler: async (ctx) => {
      const { slug } = ctx.body;
      if (await ctx.em.count(Organization, { slug })) throw ORG_ERRORS.SLUG_IS_TAKEN();
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/update',
    session: 'session',
    body: z.object({
      data: z
        .object({ name: z.string().trim().min(1), slug: slugSchema, logo: z.string().nullable(), metadata: metadataInput.nullable() })
        .partial(),
      organizationId: z.string().optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const orgId = targetOrganization(me, body.organizationId);
      if (!orgId) throw ORG_ERRORS.ORGANIZATION_NOT_FOUND();
      const member = await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.USER_IS_NOT_A_MEMBER, { organization: ['update'] }, ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_ORGANIZATION);
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/delete',
    session: 'session',
    body: z.object({ organizationId: z.string() }),
    handler: async (ctx) => {
      const { me } = ctx;
      const { organizationId } = ctx.body;
      const member = await requireMember(ctx.em, organizationId, me.user.id, ORG_ERRORS.USER_IS_NOT_A_MEMBER, { organization: ['delete'] }, ORG_ERRORS.NOT_ALLOWED_TO_DELETE_ORGANIZATION);
      const shown = baOrganization(member.organization, 'text');
      await clearActiveFor(ctx.em, organizationId);
      if (me.session.activeOrganizationId === organizationId) await setActiveOrganization(ctx, me, null);
      await ctx.em.nativeDelete(Organization, { id: organizationId });
      return shown;
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/list',
    session: 'session',
    handler: async (ctx) => {
      const { me } = ctx;
      return (await organizationsOf(ctx.em, me.user.id)).map((o) => baOrganization(o, 'text'));
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/get-full-organization',
    session: 'session',
    query: z.object({ organizationId: z.string().optional(), organizationSlug: z.string().optional() }),
    handler: async (ctx) => {
      const { me, query: q } = ctx;
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/set-active',
    session: 'session',
    body: z.object({ organizationId: z.string().nullable().optional(), organizationSlug: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
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
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/has-permission',
    session: 'session',
    body: z.object({
      organizationId: z.string().optional(),
      permission: z.record(z.string(), z.array(z.string())).optional(),
      permissions: z.record(z.string(), z.array(z.string())).optional(),
      connector: z.enum(['AND', 'OR']).optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const orgId = activeOrganization(me, body.organizationId);
      const member = await findMember(ctx.em, orgId, me.user.id);
      if (!member) throw new AuthError(401, 'User is not a member of the organization');
      return { error: null, success: hasPermission(member.role, body.permissions ?? body.permission ?? {}, body.connector) };
    },
  }),
];
