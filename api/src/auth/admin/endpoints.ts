/**
 * The Better Auth admin plugin under /api/auth/admin/*: create-user, list-users (search, filter, sort,
 * paginate), set-role, ban-user / unban-user (a ban ends the user's sessions and blocks sign-in until it
 * expires), impersonate-user / stop-impersonating (the impersonated session is marked `impersonatedBy`
 * and lasts one hour; the admin's own session waits in the signed `admin_session` cookie),
 * list-user-sessions, revoke-user-session(s), remove-user, set-user-password and has-permission.
 */
import type { FilterQuery } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { sha256Hex } from '../../kit/crypto.ts';
import { isUuid } from '../../modules/organizations/membership.ts';
import { Account, Session, User } from '../entities.ts';
import { AUTH_ERRORS, AuthError } from '../errors.ts';
import { authEndpoint, requestMeta, type AuthContext, type AuthEndpoint } from '../http.ts';
import { hashPassword } from '../password.ts';
import { syncCustomerForUser } from '../payments-sync.ts';
import { serializeSession, serializeUser } from '../serialize.ts';
import {
  clearSessionCookies,
  cookieString,
  createSession,
  findSession,
  isSecure,
  parseCookies,
  payloadOf,
  setSessionCookies,
  signCookieValue,
  verifySignedValue,
  type LoadedSession,
} from '../sessions.ts';
import { checkPasswordLength } from '../routes/shared.ts';
import { adminHasPermission, type Permissions } from './access.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

export const ADMIN_ERRORS = {
  USER_ALREADY_EXISTS: () => new AuthError(400, 'User already exists'),
  YOU_CANNOT_BAN_YOURSELF: () => new AuthError(400, 'You cannot ban yourself'),
  NOT_ALLOWED_TO_CHANGE_ROLE: () => new AuthError(403, 'You are not allowed to change users role'),
  NOT_ALLOWED_TO_CREATE_USERS: () => new AuthError(403, 'You are not allowed to create users'),
  NOT_ALLOWED_TO_LIST_USERS: () => new AuthError(403, 'You are not allowed to list users'),
  NOT_ALLOWED_TO_LIST_SESSIONS: () => new AuthError(403, 'You are not allowed to list users sessions'),
  NOT_ALLOWED_TO_BAN_USERS: () => new AuthError(403, 'You are not allowed to ban users'),
  NOT_ALLOWED_TO_IMPERSONATE: () => new AuthError(403, 'You are not allowed to impersonate users'),
  NOT_ALLOWED_TO_REVOKE_SESSIONS: () => new AuthError(403, 'You are not allowed to revoke users sessions'),
  NOT_ALLOWED_TO_DELETE_USERS: () => new AuthError(403, 'You are not allowed to delete users'),
  NOT_ALLOWED_TO_SET_PASSWORD: () => new AuthError(403, 'You are not allowed to set users password'),
  USER_NOT_FOUND: () => new AuthError(404, 'User not found'),
  NOT_IMPERSONATING: () => new AuthError(400, 'You are not impersonating anyone'),
  ADMIN_SESSION_NOT_FOUND: () => new AuthError(500, 'Failed to find admin session'),
};

/** Impersonated sessions last one hour. */
export const IMPERSONATION_SECONDS = 3600;
const ADMIN_SESSION_COOKIE = 'better-auth.admin_session';

function requirePermission(ctx: AuthContext, me: LoadedSession, permissions: Permissions, refusal: () => AuthError) {
  if (!adminHasPermission(ctx.deps.cfg, me.user, permissions)) throw refusal();
}

async function targetUser(ctx: AuthContext, userId: string): Promise<User> {
  const user = isUuid(userId) ? await ctx.em.findOne(User, { id: userId }) : null;
  if (!user) throw ADMIN_ERRORS.USER_NOT_FOUND();
  return user;
}

const roleInput = z.union([z.string(), z.array(z.string())]).transform((r) =>
  (Array.isArray(r) ? r : r.split(',')).map((x) => x.trim()).filter(Boolean).join(','),
);
const userIdBody = z.object({ userId: z.coerce.string() });

/** Fields list-users may search, filter and sort by, and their columns. */
const FIELDS = {
  id: 'id',
  email: 'email',
  name: 'name',
  username: 'username',
  role: 'role',
  banned: 'banned',
  emailVerified: 'emailVerified',
  twoFactorEnabled: 'twoFactorEnabled',
  createdAt: 'createdAt',
  updatedAt: 'modifiedAt',
} as const;
type Field = keyof typeof FIELDS;
const BOOLEAN_FIELDS = new Set<Field>(['banned', 'emailVerified', 'twoFactorEnabled']);

const likeEscape = (v: string) => v.replace(/[\\%_]/g, (c) => `\\${c}`);

function condition(field: Field, operator: string, raw: string | number | boolean): FilterQuery<User> | null {
  const column = FIELDS[field];
  let value: unknown = raw;
  if (BOOLEAN_FIELDS.has(field)) value = raw === true || raw === 'true';
  else if (field === 'createdAt' || field === 'updatedAt') {
    const d = new Date(String(raw));
    if (Number.isNaN(d.getTime())) return null;
    value = d;
  } else if (field === 'id' && !isUuid(raw)) return operator === 'ne' ? {} : null;
  else value = String(raw);
  const text = String(raw);
  switch (operator) {
    case 'eq': return { [column]: value };
    case 'ne': return { [column]: { $ne: value } };
    case 'lt': return { [column]: { $lt: value } };
    case 'lte': return { [column]: { $lte: value } };
    case 'gt': return { [column]: { $gt: value } };
    case 'gte': return { [column]: { $gte: value } };
    case 'contains': return { [column]: { $ilike: `%${likeEscape(text)}%` } };
    case 'starts_with': return { [column]: { $ilike: `${likeEscape(text)}%` } };
    case 'ends_with': return { [column]: { $ilike: `%${likeEscape(text)}` } };
    default: return null;
  }
}

const listUsersQuery = z.object({
  searchValue: z.string().optional(),
  searchField: z.enum(['email', 'name']).optional(),
  searchOperator: z.enum(['contains', 'starts_with', 'ends_with']).optional(),
  limit: z.union([z.string(), z.number()]).optional(),
  offset: z.union([z.string(), z.number()]).optional(),
  sortBy: z.string().optional(),
  sortDirection: z.enum(['asc', 'desc']).optional(),
  filterField: z.string().optional(),
  filterValue: z.union([z.string(), z.number(), z.boolean()]).optional(),
  filterOperator: z.enum(['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'contains']).optional(),
});

const permissionsRecord = z.record(z.string(), z.array(z.string()));

export const adminEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/admin/create-user',
    session: 'session',
    body: z.object({
      email: z.string(),
      password: z.string(),
      name: z.string(),
      role: roleInput.optional(),
      data: z.record(z.string(), z.unknown()).optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      requirePermission(ctx, me, { user: ['create'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_CREATE_USERS);
      const email = z.email().safeParse(body.email.trim().toLowerCase());
      if (!email.success) throw AUTH_ERRORS.INVALID_EMAIL();
      checkPasswordLength(body.password);
      if (await ctx.em.count(User, { email: email.data })) throw ADMIN_ERRORS.USER_ALREADY_EXISTS();
      const user = ctx.em.create(User, { email: email.data, name: body.name, emailVerified: false, role: body.role || 'user', image: null });
      ctx.em.create(Account, { user, providerId: 'credential', accountId: user.id, password: await hashPassword(body.password) });
      await ctx.em.flush();
      await syncCustomerForUser(ctx.deps, user);
      return { user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/admin/list-users',
    session: 'session',
    query: listUsersQuery,
    handler: async (ctx) => {
      const { me, query: q } = ctx;
      requirePermission(ctx, me, { user: ['list'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_LIST_USERS);
      const limit = Number(q.limit) || undefined;
      const offset = Number(q.offset) || undefined;
      const where: FilterQuery<User>[] = [];
      if (q.searchValue) where.push(condition(q.searchField ?? 'email', q.searchOperator ?? 'contains', q.searchValue)!);
      if (q.filterValue !== undefined && q.filterValue !== '') {
        const field = (q.filterField ?? 'email') as Field;
        const c = field in FIELDS ? condition(field, q.filterOperator ?? 'eq', q.filterValue) : null;
        // An unknown field or a value it cannot hold matches nothing (Better Auth answers an empty list).
        if (!c) return { users: [], total: 0, limit, offset };
        where.push(c);
      }
      const sortField = q.sortBy && q.sortBy in FIELDS ? FIELDS[q.sortBy as Field] : 'createdAt';
      const [users, total] = await findAndCountInOneSnapshot(ctx.em, User, where.length ? { $and: where } : {}, {
        orderBy: { [sortField]: q.sortBy ? (q.sortDirection ?? 'asc') : 'asc', id: 'asc' },
        limit: limit ? Math.min(limit, 1000) : 100,
        offset: offset ?? 0,
      });
      return { users: users.map(serializeUser), total, limit, offset };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/set-role',
    session: 'session',
    body: z.object({ userId: z.coerce.string(), role: roleInput }),
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { user: ['set-role'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_CHANGE_ROLE);
      const user = await targetUser(ctx, ctx.body.userId);
      user.role = ctx.body.role || 'user';
      await ctx.em.flush();
      return { user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/ban-user',
    session: 'session',
    body: z.object({
      userId: z.coerce.string(),
      banReason: z.string().max(1000).optional(),
      banExpiresIn: z.number().positive().optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      requirePermission(ctx, me, { user: ['ban'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_BAN_USERS);
      if (body.userId === me.user.id) throw ADMIN_ERRORS.YOU_CANNOT_BAN_YOURSELF();
      const user = await targetUser(ctx, body.userId);
      user.banned = true;
      user.banReason = body.banReason || 'No reason';
      user.banExpires = body.banExpiresIn ? new Date(Date.now() + body.banExpiresIn * 1000) : null;
      await ctx.em.flush();
      await ctx.em.nativeDelete(Session, { user: user.id });
      return { user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/unban-user',
    session: 'session',
    body: userIdBody,
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { user: ['ban'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_BAN_USERS);
      const user = await targetUser(ctx, ctx.body.userId);
      user.banned = false;
      user.banReason = null;
      user.banExpires = null;
      await ctx.em.flush();
      return { user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/impersonate-user',
    session: 'session',
    body: userIdBody,
    handler: async (ctx) => {
      const { me, body } = ctx;
      const { cfg } = ctx.deps;
      requirePermission(ctx, me, { user: ['impersonate'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_IMPERSONATE);
      const target = await targetUser(ctx, body.userId);
      const s = await createSession(ctx.em, target, {
        ...requestMeta(ctx.req),
        rememberMe: false,
        impersonatedBy: me.user.id,
        ttlSeconds: IMPERSONATION_SECONDS,
      });
      const adminCookie = (isSecure(cfg) ? '__Secure-' : '') + ADMIN_SESSION_COOKIE;
      ctx.res.append('Set-Cookie', cookieString(cfg, adminCookie, signCookieValue(cfg.SECRET, me.token), undefined));
      setSessionCookies(ctx.res, cfg, s);
      return { session: serializeSession(s.session, s.token), user: serializeUser(target) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/stop-impersonating',
    session: 'session',
    handler: async (ctx) => {
      const { me } = ctx;
      const { cfg } = ctx.deps;
      if (!me.session.impersonatedBy) throw ADMIN_ERRORS.NOT_IMPERSONATING();
      const adminCookie = (isSecure(cfg) ? '__Secure-' : '') + ADMIN_SESSION_COOKIE;
      const signed = parseCookies(ctx.req.headers.cookie).get(adminCookie);
      const token = signed ? verifySignedValue(cfg.SECRET, signed) : null;
      const adminSession = token ? await findSession(ctx.em, token) : null;
      if (!token || !adminSession || adminSession.user.id !== me.session.impersonatedBy) throw ADMIN_ERRORS.ADMIN_SESSION_NOT_FOUND();
      await ctx.em.nativeDelete(Session, { id: me.session.id });
      clearSessionCookies(ctx.res, cfg);
      ctx.res.append('Set-Cookie', cookieString(cfg, adminCookie, '', 0));
      const restored = { session: adminSession, user: adminSession.user, token };
      setSessionCookies(ctx.res, cfg, restored);
      return payloadOf(restored);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/list-user-sessions',
    session: 'session',
    body: userIdBody,
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { session: ['list'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_LIST_SESSIONS);
      if (!isUuid(ctx.body.userId)) return { sessions: [] };
      const sessions = await ctx.em.find(
        Session,
        { user: ctx.body.userId, expiresAt: { $gt: new Date() } },
        { orderBy: { createdAt: 'asc' } },
      );
      // Tokens are stored hashed: each session carries its id in their place (revoke-user-session takes it).
      return { sessions: sessions.map((s) => serializeSession(s, s.id)) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/revoke-user-session',
    session: 'session',
    body: z.object({ sessionToken: z.string().min(1) }),
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { session: ['revoke'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_REVOKE_SESSIONS);
      const t = ctx.body.sessionToken;
      await ctx.em.nativeDelete(Session, { $or: [{ tokenHash: sha256Hex(t) }, ...(isUuid(t) ? [{ id: t }] : [])] });
      return { success: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/revoke-user-sessions',
    session: 'session',
    body: userIdBody,
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { session: ['revoke'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_REVOKE_SESSIONS);
      if (isUuid(ctx.body.userId)) await ctx.em.nativeDelete(Session, { user: ctx.body.userId });
      return { success: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/remove-user',
    session: 'session',
    body: userIdBody,
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { user: ['delete'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_DELETE_USERS);
      const user = await targetUser(ctx, ctx.body.userId);
      await ctx.em.nativeDelete(User, { id: user.id });
      return { success: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/set-user-password',
    session: 'session',
    body: z.object({ newPassword: z.string(), userId: z.coerce.string() }),
    handler: async (ctx) => {
      requirePermission(ctx, ctx.me, { user: ['set-password'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_SET_PASSWORD);
      checkPasswordLength(ctx.body.newPassword);
      const user = await targetUser(ctx, ctx.body.userId);
      const hash = await hashPassword(ctx.body.newPassword);
      const account = await ctx.em.findOne(Account, { user: user.id, providerId: 'credential' });
      if (account) account.password = hash;
      else ctx.em.create(Account, { user, providerId: 'credential', accountId: user.id, password: hash });
      await ctx.em.flush();
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/admin/has-permission',
    session: 'session',
    body: z.object({
      userId: z.coerce.string().optional(),
      role: z.string().optional(),
      permission: permissionsRecord.optional(),
      permissions: permissionsRecord.optional(),
    }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const permissions = body.permissions ?? body.permission;
      if (!permissions) throw new AuthError(400, 'invalid permission check. no permission(s) were passed.');
      // A caller asks about themselves; asking about another user or a bare role is for admins.
      let subject: { id: string; role: string } = { id: me.user.id, role: me.user.role };
      if ((body.userId && body.userId !== me.user.id) || body.role) {
        requirePermission(ctx, me, { user: ['list'] }, ADMIN_ERRORS.NOT_ALLOWED_TO_LIST_USERS);
        if (body.userId && body.userId !== me.user.id) {
          const u = isUuid(body.userId) ? await ctx.em.findOne(User, { id: body.userId }) : null;
          if (!u) throw new AuthError(400, 'user not found');
          subject = { id: u.id, role: u.role };
        } else subject = { id: '', role: body.role! };
      }
      return { error: null, success: adminHasPermission(ctx.deps.cfg, subject, permissions) };
    },
  }),
];
