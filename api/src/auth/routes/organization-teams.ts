/** The Better Auth organization plugin, teams: create-team, update-team, remove-team and list-teams. */
import { z } from 'zod/v4';
import { ORG_ERRORS } from '../errors.ts';
import { authEndpoint, type AuthEndpoint } from '../http.ts';
import { Team } from '../../modules/organizations/entities.ts';
import { baTeam, findMember, hasPermission, isUuid } from '../../modules/organizations/membership.ts';
import { requireMember, activeOrganization } from './organization-shared.ts';

export const teamEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/organization/create-team',
    session: 'session',
    body: z.object({ name: z.string().trim().min(1), organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const orgId = activeOrganization(me, body.organizationId);
      const actor = await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.NOT_ALLOWED_TO_CREATE_TEAMS, { team: ['create'] });
      const team = ctx.em.create(Team, { organization: actor.organization, name: body.name });
      await ctx.em.flush();
      return baTeam(team);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/update-team',
    session: 'session',
    body: z.object({ teamId: z.string(), data: z.object({ name: z.string().trim().min(1), organizationId: z.string() }).partial() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const team = isUuid(body.teamId) ? await ctx.em.findOne(Team, { id: body.teamId }) : null;
      const actor = team ? await findMember(ctx.em, team.organization.id, me.user.id) : null;
      if (!team || !actor) throw ORG_ERRORS.TEAM_NOT_FOUND();
      if (!hasPermission(actor.role, { team: ['update'] })) throw ORG_ERRORS.NOT_ALLOWED_TO_UPDATE_TEAM();
      if (body.data.name !== undefined) team.name = body.data.name;
      await ctx.em.flush();
      return baTeam(team);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/organization/remove-team',
    session: 'session',
    body: z.object({ teamId: z.string(), organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const orgId = activeOrganization(me, body.organizationId);
      await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.NOT_ALLOWED_TO_DELETE_TEAMS, { team: ['delete'] });
      const team = isUuid(body.teamId) ? await ctx.em.findOne(Team, { id: body.teamId, organization: orgId }) : null;
      if (!team) throw ORG_ERRORS.TEAM_NOT_FOUND();
      if ((await ctx.em.count(Team, { organization: orgId })) <= 1) throw ORG_ERRORS.UNABLE_TO_REMOVE_LAST_TEAM();
      await ctx.em.nativeDelete(Team, { id: team.id });
      return { message: 'Team removed successfully.' };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/organization/list-teams',
    session: 'session',
    query: z.object({ organizationId: z.string().optional() }),
    handler: async (ctx) => {
      const { me, query: q } = ctx;
      const orgId = activeOrganization(me, q.organizationId);
      await requireMember(ctx.em, orgId, me.user.id, ORG_ERRORS.NOT_A_MEMBER_FORBIDDEN);
      const teams = await ctx.em.find(Team, { organization: orgId }, { orderBy: { createdAt: 'asc' } });
      return teams.map(baTeam);
    },
  }),
];
