/**
 * /ok, /error, /get-session, email and username sign-up/sign-in, sign-out and session management.
 */
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { z } from 'zod/v4';
import { sha256Hex } from '../../kit/crypto.ts';
import { isUuid } from '../../modules/organizations/membership.ts';
import { Account, Session, User } from '../entities.ts';
import { AUTH_ERRORS } from '../errors.ts';
import {
  authEndpoint,
  currentSession,
  queryBool,
  requestMeta,
  sessionPayload,
  type AuthContext,
  type AuthEndpoint,
} from '../http.ts';
import { escapeHtml } from '../mail-templates.ts';
import { dummyHash, hashPassword, verifyPassword } from '../password.ts';
import { serializeSession, serializeUser } from '../serialize.ts';
import { clearSessionCookies, createSession, isBanned, readSignedCookie, setSessionCookies } from '../sessions.ts';
import { isTrustedDevice, startChallenge, trustDevice } from '../two-factor/service.ts';
import { runStrategy } from '../strategies.ts';
import { syncCustomerForUser } from '../payments-sync.ts';
import { checkPasswordLength, checkUsername, sendVerificationEmail } from './shared.ts';

const emailSchema = z.string().trim().toLowerCase().pipe(z.email());

function errorPage(code: string): string {
  const safe = escapeHtml(code);
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Authentication Error</title>
  <style>
    body { font-family: -apple-system, BlinkMacSystemFont, 'Segoe UI', Roboto, sans-serif; background: #f6f7f9; color: #1f2328;
           display: flex; align-items: center; justify-content: center; min-height: 100vh; margin: 0; }
    main { background: #fff; border: 1px solid #e3e6ea; border-radius: 10px; padding: 32px; max-width: 420px; text-align: center; }
    h1 { font-size: 1.4rem; margin: 0 0 12px; color: #b42318; }
    p { line-height: 1.5; color: #424a53; }
    a { display: inline-block; margin-top: 8px; padding: 10px 18px; background: #1f2328; color: #fff; border-radius: 6px; text-decoration: none; }
    code { font-size: 0.9rem; color: #57606a; }
  </style>
</head>
<body>
  <main>
    <h1>Authentication Error</h1>
    <p>Something went wrong while signing you in or confirming your request. Please try again.</p>
    <p>Error code: <code id="error-code">${safe}</code></p>
    <a href="/" id="home">Back to the application</a>
  </main>
</body>
</html>`;
}

/** Signs a user in on this response: a new session (never a reused token), cookies set. */
async function startSession(ctx: AuthContext, user: User, rememberMe: boolean | undefined) {
  const s = await createSession(ctx.em, user, { ...requestMeta(ctx.req), rememberMe });
  setSessionCookies(ctx.res, ctx.deps.cfg, s);
  return s;
}

/**
 * For a user with two-factor on, signing in from a browser it does not trust yet: no session, a pending
 * sign-in instead (`{ twoFactorRedirect: true }`). A trusted browser goes straight on (its trust renewed).
 */
async function secondFactorFirst(ctx: AuthContext, user: User, rememberMe: boolean | undefined) {
  if (!user.twoFactorEnabled) return null;
  if (isBanned(user)) throw AUTH_ERRORS.BANNED_USER();
  const { cfg } = ctx.deps;
  if (isTrustedDevice(cfg, ctx.req, user.id)) {
    trustDevice(cfg, ctx.res, user.id);
    return null;
  }
  clearSessionCookies(ctx.res, cfg);
  await startChallenge(ctx.em, cfg, ctx.res, user, rememberMe !== false);
  return { twoFactorRedirect: true };
}

const getSessionQuery = z.object({ disableCookieCache: queryBool, disableRefresh: queryBool });

export const coreEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'get',
    path: '/ok',
    handler: async () => ({ ok: true }),
  }),

  authEndpoint({
    method: 'get',
    path: '/error',
    handler: async ({ req, res }) => {
      const code = typeof req.query.error === 'string' && req.query.error ? req.query.error : 'Unknown';
      res.type('html').send(errorPage(code));
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/get-session',
    query: getSessionQuery,
    handler: (ctx) => sessionPayload(ctx, ctx.query),
  }),

  authEndpoint({
    method: 'post',
    path: '/sign-up/email',
    body: z.object({
      email: z.string(),
      password: z.string(),
      name: z.string().default(''),
      image: z.string().nullish(),
      username: z.string().optional(),
      displayUsername: z.string().optional(),
      callbackURL: z.string().optional(),
      rememberMe: z.boolean().optional(),
    }),
    handler: async (ctx) => {
      const { body } = ctx;
      const email = emailSchema.safeParse(body.email);
      if (!email.success) throw AUTH_ERRORS.INVALID_EMAIL();
      checkPasswordLength(body.password);
      if (body.username !== undefined) await checkUsername(ctx.em, body.username);
      if (await ctx.em.count(User, { email: email.data })) throw AUTH_ERRORS.USER_ALREADY_EXISTS();

      const passwordHash = await hashPassword(body.password);
      const user = ctx.em.create(User, {
        email: email.data,
        name: body.name,
        image: body.image ?? null,
        emailVerified: false,
        username: body.username ? body.username.toLowerCase() : null,
        displayUsername: body.username ? (body.displayUsername || body.username) : (body.displayUsername ?? null),
      });
      ctx.em.create(Account, { user, providerId: 'credential', accountId: user.id, password: passwordHash });
      try {
        await ctx.em.flush();
      } catch (err) {
        if (err instanceof UniqueConstraintViolationException) {
          throw /username/i.test(err.message) ? AUTH_ERRORS.USERNAME_TAKEN() : AUTH_ERRORS.USER_ALREADY_EXISTS();
        }
        throw err;
      }
      await syncCustomerForUser(ctx.deps, user);
      // As Better Auth by default: the verification mail goes out on sign-up when verification is
      // required; otherwise the client asks for it (send-verification-email).
      if (ctx.deps.cfg.REQUIRE_EMAIL_VERIFICATION) {
        await sendVerificationEmail(ctx, ctx.em, user, body.callbackURL);
        return { token: null, user: serializeUser(user) };
      }
      const s = await startSession(ctx, user, body.rememberMe);
      return { token: s.token, user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/sign-in/email',
    body: z.object({
      email: z.string(),
      password: z.string().optional(),
      callbackURL: z.string().optional(),
      rememberMe: z.boolean().optional(),
    }),
    handler: async (ctx) => {
      const { body } = ctx;
      if (!emailSchema.safeParse(body.email).success) throw AUTH_ERRORS.INVALID_EMAIL();
      if (!body.password) {
        // Same answer and the same scrypt cost as a wrong password.
        await verifyPassword('', await dummyHash());
        throw AUTH_ERRORS.INVALID_EMAIL_OR_PASSWORD();
      }
      const user = await runStrategy<User>('local', ctx.req, ctx.res);
      if (!user) throw AUTH_ERRORS.INVALID_EMAIL_OR_PASSWORD();
      if (ctx.deps.cfg.REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) {
        await sendVerificationEmail(ctx, ctx.em, user, body.callbackURL);
        throw AUTH_ERRORS.EMAIL_NOT_VERIFIED();
      }
      const pending = await secondFactorFirst(ctx, user, body.rememberMe);
      if (pending) return pending;
      const s = await startSession(ctx, user, body.rememberMe);
      return { redirect: !!body.callbackURL, token: s.token, url: body.callbackURL, user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/sign-in/username',
    body: z.object({ username: z.string().optional(), password: z.string().optional(), rememberMe: z.boolean().optional() }),
    handler: async (ctx) => {
      const { body } = ctx;
      if (!body.username || !body.password) {
        await verifyPassword('', await dummyHash());
        throw AUTH_ERRORS.INVALID_USERNAME_OR_PASSWORD();
      }
      if (body.username.length < 3) throw AUTH_ERRORS.USERNAME_TOO_SHORT();
      if (body.username.length > 30) throw AUTH_ERRORS.USERNAME_TOO_LONG();
      if (!/^[a-zA-Z0-9_.]+$/.test(body.username)) throw AUTH_ERRORS.USERNAME_INVALID();
      const user = await runStrategy<User>('local-username', ctx.req, ctx.res);
      if (!user) throw AUTH_ERRORS.INVALID_USERNAME_OR_PASSWORD();
      if (ctx.deps.cfg.REQUIRE_EMAIL_VERIFICATION && !user.emailVerified) {
        await sendVerificationEmail(ctx, ctx.em, user, undefined);
        throw AUTH_ERRORS.USERNAME_EMAIL_NOT_VERIFIED();
      }
      const pending = await secondFactorFirst(ctx, user, body.rememberMe);
      if (pending) return pending;
      const s = await startSession(ctx, user, body.rememberMe);
      return { token: s.token, user: serializeUser(user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/sign-out',
    handler: async (ctx) => {
      const { cfg } = ctx.deps;
      const s = await currentSession(ctx, { disableRefresh: true });
      const cookieToken = readSignedCookie(cfg, ctx.req);
      clearSessionCookies(ctx.res, cfg);
      if (!s && !cookieToken) throw AUTH_ERRORS.FAILED_TO_GET_SESSION();
      if (s) await ctx.em.nativeDelete(Session, { id: s.session.id });
      return { success: true };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/list-sessions',
    session: 'session',
    handler: async ({ em, me }) => {
      const sessions = await em.find(Session, { user: me.user.id, expiresAt: { $gt: new Date() } }, { orderBy: { createdAt: 'asc' } });
      // Only the current session's token is known (tokens are stored hashed); the others carry their id,
      // which revoke-session accepts.
      // Sessions an admin opened by impersonating the user are not the user's to see.
      return sessions
        .filter((s) => !s.impersonatedBy || s.id === me.session.id)
        .map((s) => serializeSession(s, s.id === me.session.id ? me.token : s.id));
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/revoke-session',
    session: 'session',
    body: z.object({ token: z.string().min(1) }),
    handler: async (ctx) => {
      const { me, body } = ctx;
      const target = await ctx.em.findOne(Session, {
        user: me.user.id,
        $or: [{ tokenHash: sha256Hex(body.token) }, ...(isUuid(body.token) ? [{ id: body.token }] : [])],
      });
      if (!target) throw AUTH_ERRORS.SESSION_NOT_FOUND();
      await ctx.em.nativeDelete(Session, { id: target.id });
      if (target.id === me.session.id) clearSessionCookies(ctx.res, ctx.deps.cfg);
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/revoke-sessions',
    session: 'session',
    handler: async (ctx) => {
      await ctx.em.nativeDelete(Session, { user: ctx.me.user.id });
      clearSessionCookies(ctx.res, ctx.deps.cfg);
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/revoke-other-sessions',
    session: 'session',
    handler: async ({ em, me }) => {
      await em.nativeDelete(Session, { user: me.user.id, id: { $ne: me.session.id } });
      return { status: true };
    },
  }),
];
