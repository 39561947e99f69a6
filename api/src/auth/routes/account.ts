/**
 * Account routes: update-user, change-password, set-password, change-email, delete-user (and its mailed
 * confirmation), email verification, password reset and the linked-account list.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { Account, Session, User } from '../entities.ts';
import { AUTH_ERRORS, AuthError } from '../errors.ts';
import {
  authEndpoint,
  authUrl,
  currentSession,
  deliver,
  parseBody,
  redirectTarget,
  resetCookies,
  type AuthContext,
  type AuthEndpoint,
} from '../http.ts';
import { changeEmailMail, deleteAccountMail, resetPasswordMail } from '../mail-templates.ts';
import { checkRedirect } from '../origins.ts';
import { hashPassword, verifyPassword } from '../password.ts';
import { serializeUser } from '../serialize.ts';
import { clearSessionCookies, createSession, isFresh, setSessionCookies, type LoadedSession } from '../sessions.ts';
import { consumeVerification, createVerification, peekVerification } from '../verification.ts';
import { syncCustomerForUser } from '../payments-sync.ts';
import { checkPasswordLength, checkUsername, inBackground, sendVerificationEmail, type EmailVerificationValue } from './shared.ts';

interface ChangeEmailValue {
  userId: string;
  email: string;
  newEmail: string;
}

const emailSchema = z.string().trim().toLowerCase().pipe(z.email());

function userShape(u: User) {
  const s = serializeUser(u);
  return { id: s.id, email: s.email, name: s.name, image: s.image, emailVerified: s.emailVerified, createdAt: s.createdAt, updatedAt: s.updatedAt };
}

async function credentialAccount(em: EntityManager, userId: string): Promise<Account | null> {
  const account = await em.findOne(Account, { user: userId, providerId: 'credential' });
  return account?.password ? account : null;
}

async function deleteUser(ctx: AuthContext, me: LoadedSession) {
  await ctx.em.nativeDelete(User, { id: me.user.id });
  clearSessionCookies(ctx.res, ctx.deps.cfg);
}

/** A redirect to the callback with `?error=`, or the error itself when there is no callback. */
function failTo(ctx: AuthContext, callbackURL: string | undefined, error: string, status = 401): never {
  if (callbackURL) {
    ctx.res.redirect(302, redirectTarget(ctx, callbackURL, { error }));
    throw new Redirected();
  }
  throw new AuthError(status, error);
}

class Redirected extends Error {}

async function forgetPassword(ctx: AuthContext & { body: { email: string; redirectTo?: string | undefined } }) {
  const { body } = ctx;
  // Always the same answer; whether a mail goes out is decided after it, off the request.
  inBackground(ctx, 'reset mail', async (em) => {
    const user = await em.findOne(User, { email: body.email });
    if (!user) return;
    const token = await createVerification(em, 'reset-password', { userId: user.id });
    const url = authUrl(ctx, `/reset-password/${token}?callbackURL=${encodeURIComponent(body.redirectTo ?? '')}`);
    deliver(ctx, resetPasswordMail({ to: user.email, name: user.name, url }));
  });
  return { status: true };
}

const forgetPasswordBody = z.object({ email: emailSchema, redirectTo: z.string().optional() });
const updateUserBody = z.object({
  name: z.string().optional(),
  image: z.string().nullish(),
  username: z.string().optional(),
  displayUsername: z.string().optional(),
});

export const accountEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/update-user',
    session: 'session',
    handler: async (ctx) => {
      const { me } = ctx;
      const raw = (ctx.req.body ?? {}) as Record<string, unknown>;
      // Checked before the body's shape, as Better Auth does.
      if (raw.email !== undefined) throw AUTH_ERRORS.EMAIL_CAN_NOT_BE_UPDATED();
      const body = parseBody(updateUserBody, ctx.req);
      if (Object.values(body).every((v) => v === undefined)) return { status: true };
      const user = me.user;
      if (body.username !== undefined) {
        await checkUsername(ctx.em, body.username, user.id);
        user.username = body.username.toLowerCase();
        user.displayUsername = body.displayUsername || body.username;
      } else if (body.displayUsername !== undefined) {
        user.displayUsername = body.displayUsername;
      }
      if (body.name !== undefined) user.name = body.name;
      if (body.image !== undefined) user.image = body.image;
      try {
        await ctx.em.flush();
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) throw AUTH_ERRORS.USERNAME_TAKEN();
        throw err;
      }
      await syncCustomerForUser(ctx.deps, user);
      resetCookies(ctx, me);
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/change-password',
    session: 'session',
    body: z.object({ newPassword: z.string(), currentPassword: z.string(), revokeOtherSessions: z.boolean().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      checkPasswordLength(body.newPassword);
      const account = await credentialAccount(ctx.em, me.user.id);
      if (!account) throw AUTH_ERRORS.CREDENTIAL_ACCOUNT_NOT_FOUND();
      if (!(await verifyPassword(body.currentPassword, account.password!))) throw AUTH_ERRORS.INVALID_PASSWORD();
      account.password = await hashPassword(body.newPassword);
      await ctx.em.flush();
      let token: string | null = null;
      if (body.revokeOtherSessions) {
        // Every session goes, this one too; the caller continues on a brand-new one.
        await ctx.em.nativeDelete(Session, { user: me.user.id });
        const s = await createSession(ctx.em, me.user, { ipAddress: ctx.req.ip, userAgent: ctx.req.get('user-agent'), rememberMe: me.session.rememberMe });
        setSessionCookies(ctx.res, ctx.deps.cfg, s);
        token = s.token;
      }
      return { token, user: userShape(me.user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/set-password',
    session: 'fresh',
    body: z.object({ newPassword: z.string() }),
    handler: async ({ em, me, body }) => {
      checkPasswordLength(body.newPassword);
      const existing = await em.findOne(Account, { user: me.user.id, providerId: 'credential' });
      if (existing?.password) throw AUTH_ERRORS.USER_ALREADY_HAS_PASSWORD();
      const hash = await hashPassword(body.newPassword);
      if (existing) existing.password = hash;
      else em.create(Account, { user: me.user, providerId: 'credential', accountId: me.user.id, password: hash });
      await em.flush();
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/change-email',
    session: 'fresh',
    body: z.object({ newEmail: emailSchema, callbackURL: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const user = me.user;
      if (body.newEmail === user.email) throw AUTH_ERRORS.EMAIL_IS_THE_SAME();
      if (await ctx.em.count(User, { email: body.newEmail })) throw AUTH_ERRORS.COULDNT_UPDATE_EMAIL();
      if (!user.emailVerified) {
        // Nothing verified to protect: change at once, then verify the new address.
        user.email = body.newEmail;
        try {
          await ctx.em.flush();
        } catch (err) {
          if (err instanceof UniqueConstraintViolationException) throw AUTH_ERRORS.COULDNT_UPDATE_EMAIL();
          throw err;
        }
        await syncCustomerForUser(ctx.deps, user);
        resetCookies(ctx, me);
        await sendVerificationEmail(ctx, ctx.em, user, body.callbackURL);
        return { status: true };
      }
      const token = await createVerification(ctx.em, 'change-email', {
        userId: user.id,
        email: user.email,
        newEmail: body.newEmail,
      } satisfies ChangeEmailValue);
      const url = authUrl(ctx, `/verify-email?token=${token}&callbackURL=${encodeURIComponent(body.callbackURL || '/')}`);
      deliver(ctx, changeEmailMail({ to: body.newEmail, name: user.name, oldEmail: user.email, url }));
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/send-verification-email',
    body: z.object({ email: emailSchema, callbackURL: z.string().optional() }),
    handler: async (ctx) => {
      const { body } = ctx;
      const me = await currentSession(ctx);
      if (me) {
        if (me.user.emailVerified) throw new AuthError(400, 'You can only send a verification email to an unverified email');
        if (me.user.email !== body.email) throw new AuthError(400, 'You can only send a verification email to your own email');
        await sendVerificationEmail(ctx, ctx.em, me.user, body.callbackURL);
        return { status: true };
      }
      // Anonymous: the same answer whether or not the address is known; the work happens afterwards.
      inBackground(ctx, 'verification mail', async (em) => {
        const user = await em.findOne(User, { email: body.email });
        if (user && !user.emailVerified) await sendVerificationEmail(ctx, em, user, body.callbackURL);
      });
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/verify-email',
    query: z.object({ token: z.string(), callbackURL: z.string().optional() }),
    handler: async (ctx) => {
      const q = ctx.query;
      checkRedirect(ctx.deps.cfg, q.callbackURL, 'callbackURL');
      try {
        const verified = await consumeVerification<EmailVerificationValue>(ctx.em, 'verify-email', q.token);
        const change = verified.status === 'invalid'
          ? await consumeVerification<ChangeEmailValue>(ctx.em, 'change-email', q.token)
          : ({ status: 'invalid' } as const);
        const outcome = verified.status !== 'invalid' ? verified : change;
        if (outcome.status === 'expired') return failTo(ctx, q.callbackURL, 'token_expired');
        if (outcome.status === 'invalid') return failTo(ctx, q.callbackURL, 'invalid_token');

        if (change.status === 'ok') {
          const v = change.value;
          const user = await ctx.em.findOne(User, { id: v.userId });
          if (!user) return failTo(ctx, q.callbackURL, 'user_not_found');
          if (user.email !== v.email) return failTo(ctx, q.callbackURL, 'invalid_token');
          if (await ctx.em.count(User, { email: v.newEmail })) return failTo(ctx, q.callbackURL, 'email_already_in_use', 400);
          user.email = v.newEmail;
          // The link reached the new address, which proves it.
          user.emailVerified = true;
          await ctx.em.flush();
          await syncCustomerForUser(ctx.deps, user);
          const me = await currentSession(ctx, { disableRefresh: true });
          if (me && me.user.id === user.id) resetCookies(ctx, me);
          if (q.callbackURL) return ctx.res.redirect(302, redirectTarget(ctx, q.callbackURL));
          return { status: true, user: userShape(user) };
        }

        const v = (verified as { value: EmailVerificationValue }).value;
        const user = await ctx.em.findOne(User, { id: v.userId });
        if (!user) return failTo(ctx, q.callbackURL, 'user_not_found');
        if (user.email !== v.email) return failTo(ctx, q.callbackURL, 'invalid_token');
        user.emailVerified = true;
        await ctx.em.flush();
        const me = await currentSession(ctx, { disableRefresh: true });
        if (me && me.user.id === user.id) resetCookies(ctx, me);
        if (q.callbackURL) return ctx.res.redirect(302, redirectTarget(ctx, q.callbackURL));
        return { status: true, user: null };
      } catch (err) {
        if (err instanceof Redirected) return undefined;
        throw err;
      }
    },
  }),

  authEndpoint({ method: 'post', path: '/forget-password', body: forgetPasswordBody, handler: forgetPassword }),
  authEndpoint({ method: 'post', path: '/request-password-reset', body: forgetPasswordBody, handler: forgetPassword }),

  authEndpoint({
    method: 'get',
    path: '/reset-password/:token',
    query: z.object({ callbackURL: z.string().optional() }),
    handler: async (ctx) => {
      const q = ctx.query;
      checkRedirect(ctx.deps.cfg, q.callbackURL, 'callbackURL');
      const token = String(ctx.req.params.token ?? '');
      const live = await peekVerification<{ userId: string }>(ctx.em, 'reset-password', token);
      if (!q.callbackURL) {
        if (live.status === 'ok') return { token };
        return ctx.res.redirect(302, redirectTarget(ctx, authUrl(ctx, '/error'), { error: 'INVALID_TOKEN' }));
      }
      const target =
        live.status === 'ok'
          ? redirectTarget(ctx, q.callbackURL, { token })
          : redirectTarget(ctx, q.callbackURL, { error: 'INVALID_TOKEN' });
      return ctx.res.redirect(302, target);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/reset-password',
    body: z.object({ newPassword: z.string(), token: z.string().optional() }),
    handler: async (ctx) => {
      const { body } = ctx;
      const token = body.token || (typeof ctx.req.query.token === 'string' ? ctx.req.query.token : '');
      if (!token) throw AUTH_ERRORS.INVALID_TOKEN();
      checkPasswordLength(body.newPassword);
      const used = await consumeVerification<{ userId: string }>(ctx.em, 'reset-password', token);
      if (used.status !== 'ok') throw AUTH_ERRORS.INVALID_TOKEN();
      const user = await ctx.em.findOne(User, { id: used.value.userId });
      if (!user) throw AUTH_ERRORS.INVALID_TOKEN();
      const hash = await hashPassword(body.newPassword);
      const account = await ctx.em.findOne(Account, { user, providerId: 'credential' });
      if (account) account.password = hash;
      else ctx.em.create(Account, { user, providerId: 'credential', accountId: user.id, password: hash });
      await ctx.em.flush();
      // Whoever held a session before the reset holds it no longer.
      await ctx.em.nativeDelete(Session, { user: user.id });
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/delete-user',
    session: 'session',
    body: z.object({ callbackURL: z.string().optional(), password: z.string().optional(), token: z.string().optional() }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      if (body.password !== undefined) {
        const account = await credentialAccount(ctx.em, me.user.id);
        if (!account) throw AUTH_ERRORS.CREDENTIAL_ACCOUNT_NOT_FOUND();
        if (!(await verifyPassword(body.password, account.password!))) throw AUTH_ERRORS.INVALID_PASSWORD();
      }
      if (body.token) {
        const live = await peekVerification<{ userId: string }>(ctx.em, 'delete-account', body.token);
        if (live.status !== 'ok' || live.value.userId !== me.user.id) throw new AuthError(404, 'invalid token');
        await consumeVerification(ctx.em, 'delete-account', body.token);
        await deleteUser(ctx, me);
        return { success: true, message: 'User deleted' };
      }
      if (ctx.deps.cfg.DELETE_USER_VERIFICATION) {
        const token = await createVerification(ctx.em, 'delete-account', { userId: me.user.id });
        const url = authUrl(ctx, `/delete-user/callback?token=${token}&callbackURL=${encodeURIComponent(body.callbackURL || '/')}`);
        deliver(ctx, deleteAccountMail({ to: me.user.email, name: me.user.name, url }));
        return { success: true, message: 'Verification email sent' };
      }
      if (body.password === undefined && !isFresh(me.session)) throw AUTH_ERRORS.SESSION_EXPIRED();
      await deleteUser(ctx, me);
      return { success: true, message: 'User deleted' };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/delete-user/callback',
    query: z.object({ token: z.string(), callbackURL: z.string().optional() }),
    handler: async (ctx) => {
      const q = ctx.query;
      checkRedirect(ctx.deps.cfg, q.callbackURL, 'callbackURL');
      const me = await currentSession(ctx);
      if (!me) throw new AuthError(404, 'Failed to get user info');
      const live = await peekVerification<{ userId: string }>(ctx.em, 'delete-account', q.token);
      if (live.status !== 'ok' || live.value.userId !== me.user.id) throw new AuthError(404, 'invalid token');
      const used = await consumeVerification(ctx.em, 'delete-account', q.token);
      if (used.status !== 'ok') throw new AuthError(404, 'invalid token');
      await deleteUser(ctx, me);
      if (q.callbackURL) return ctx.res.redirect(302, redirectTarget(ctx, q.callbackURL));
      return { success: true, message: 'User deleted' };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/list-accounts',
    session: 'session',
    handler: async ({ em, me }) => {
      const accounts = await em.find(Account, { user: me.user.id }, { orderBy: { createdAt: 'asc' } });
      return accounts.map((a) => ({
        id: a.id,
        provider: a.providerId,
        createdAt: a.createdAt.toISOString(),
        updatedAt: (a.modifiedAt ?? a.createdAt).toISOString(),
        accountId: a.accountId,
        scopes: a.scope ? a.scope.split(',') : [],
      }));
    },
  }),
];
