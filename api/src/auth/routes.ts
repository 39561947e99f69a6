/**
 * The auth service at /api/auth, wire-compatible with the Better Auth 1.2 REST API (camelCase JSON,
 * `{code, message}` errors, cookie sessions). This is the first slice: email sign-up and sign-in,
 * session read and sign-out; the rest of the surface is tracked in the accounts issue.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import passport from 'passport';
import { Strategy as LocalStrategy } from 'passport-local';
import { z } from 'zod/v4';
import type { Deps } from '../deps.ts';
import { sha256Hex } from '../kit/crypto.ts';
import { registerSessionResolver } from '../kit/principals.ts';
import { Account, Session, User } from './entities.ts';
import { AuthError, AUTH_ERRORS } from './errors.ts';
import { dummyHash, hashPassword, verifyPassword } from './password.ts';
import {
  SESSION_TTL_SECONDS,
  clearSessionCookie,
  createSession,
  findSession,
  readSignedCookie,
  resolveSessionPrincipal,
  setSessionCookie,
} from './sessions.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;

export function serializeUser(u: User) {
  return {
    id: u.id,
    email: u.email,
    emailVerified: u.emailVerified,
    name: u.name,
    image: u.image ?? null,
    createdAt: u.createdAt.toISOString(),
    updatedAt: (u.modifiedAt ?? u.createdAt).toISOString(),
    ...(u.username ? { username: u.username, displayUsername: u.displayUsername ?? u.username } : {}),
  };
}

export function serializeSession(s: Session, token: string) {
  return {
    id: s.id,
    userId: s.user.id,
    token,
    expiresAt: s.expiresAt.toISOString(),
    createdAt: s.createdAt.toISOString(),
    updatedAt: (s.modifiedAt ?? s.createdAt).toISOString(),
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    activeOrganizationId: s.activeOrganizationId ?? null,
  };
}

const emailSchema = z.string().trim().toLowerCase().pipe(z.email());

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const r = schema.safeParse(body ?? {});
  if (!r.success) throw new AuthError(400, 'Invalid body parameters', 'VALIDATION_ERROR');
  return r.data;
}

function checkPasswordLength(password: string) {
  if (password.length < PASSWORD_MIN) throw AUTH_ERRORS.PASSWORD_TOO_SHORT();
  if (password.length > PASSWORD_MAX) throw AUTH_ERRORS.PASSWORD_TOO_LONG();
}

passport.use(
  'local',
  new LocalStrategy(
    { usernameField: 'email', passwordField: 'password', session: false, passReqToCallback: true },
    (req: Request, email: string, password: string, done) => {
      (async () => {
        const normalized = email.trim().toLowerCase();
        const user = await req.em.findOne(User, { email: normalized });
        const account = user ? await req.em.findOne(Account, { user, providerId: 'credential' }) : null;
        // Verify against a dummy hash for unknown users so the answer takes as long either way.
        const ok = await verifyPassword(password, account?.password ?? (await dummyHash()));
        return ok && user && account?.password ? user : false;
      })().then(
        (user) => done(null, user),
        (err: unknown) => done(err as Error),
      );
    },
  ),
);

function signIn(req: Request, res: Response, next: NextFunction): Promise<User> {
  return new Promise((resolve, reject) => {
    passport.authenticate('local', { session: false }, (err: unknown, user: User | false) => {
      if (err) return reject(err);
      if (!user) return reject(AUTH_ERRORS.INVALID_EMAIL_OR_PASSWORD());
      resolve(user);
    })(req, res, next);
  });
}

export function authRouter(deps: Deps): Router {
  const { cfg } = deps;
  const secure = cfg.PUBLIC_URL.startsWith('https:');
  registerSessionResolver(resolveSessionPrincipal, (req) => readSignedCookie(cfg.SECRET, req));

  const router = express.Router();
  const wrap =
    (fn: (req: Request, res: Response, next: NextFunction) => Promise<unknown>) =>
    (req: Request, res: Response, next: NextFunction) =>
      fn(req, res, next).then((body) => {
        if (!res.headersSent) res.json(body);
      }, next);

  const meta = (req: Request) => ({ ipAddress: req.ip, userAgent: req.get('user-agent') });

  router.get('/ok', (_req, res) => {
    res.json({ ok: true });
  });

  router.post(
    '/sign-up/email',
    wrap(async (req, res) => {
      const body = parseBody(
        z.object({
          email: z.string(),
          password: z.string(),
          name: z.string().default(''),
          image: z.string().optional(),
          callbackURL: z.string().optional(),
          rememberMe: z.boolean().optional(),
        }),
        req.body,
      );
      const email = emailSchema.safeParse(body.email);
      if (!email.success) throw AUTH_ERRORS.INVALID_EMAIL();
      checkPasswordLength(body.password);
      const em = req.em;
      if (await em.count(User, { email: email.data })) throw AUTH_ERRORS.USER_ALREADY_EXISTS();
      const passwordHash = await hashPassword(body.password);
      const user = em.create(User, { email: email.data, name: body.name, image: body.image ?? null, emailVerified: false });
      em.create(Account, { user, providerId: 'credential', accountId: user.id, password: passwordHash });
      await em.flush();
      const { token, session } = await createSession(em, user, meta(req));
      setSessionCookie(res, cfg.SECRET, token, secure, body.rememberMe === false ? undefined : SESSION_TTL_SECONDS);
      void session;
      return { token, user: serializeUser(user) };
    }),
  );

  router.post(
    '/sign-in/email',
    wrap(async (req, res, next) => {
      const body = parseBody(
        z.object({ email: z.string(), password: z.string(), callbackURL: z.string().optional(), rememberMe: z.boolean().optional() }),
        req.body,
      );
      if (!emailSchema.safeParse(body.email).success) throw AUTH_ERRORS.INVALID_EMAIL();
      const user = await signIn(req, res, next);
      const { token } = await createSession(req.em, user, meta(req));
      setSessionCookie(res, cfg.SECRET, token, secure, body.rememberMe === false ? undefined : SESSION_TTL_SECONDS);
      return { redirect: false, token, url: body.callbackURL, user: serializeUser(user) };
    }),
  );

  router.get(
    '/get-session',
    wrap(async (req) => {
      const token = readSignedCookie(cfg.SECRET, req) ?? bearerToken(req);
      const session = token ? await findSession(req.em, token) : null;
      return session ? { session: serializeSession(session, token!), user: serializeUser(session.user) } : null;
    }),
  );

  router.post(
    '/sign-out',
    wrap(async (req, res) => {
      const token = readSignedCookie(cfg.SECRET, req) ?? bearerToken(req);
      if (token) await req.em.nativeDelete(Session, { tokenHash: sha256Hex(token) });
      clearSessionCookie(res);
      return { success: true };
    }),
  );

  router.use((_req, res) => {
    res.status(404).json({ code: 'NOT_FOUND', message: 'Not found' });
  });
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (err instanceof AuthError) {
      res.status(err.status).json({ code: err.code, message: err.message });
      return;
    }
    if (err instanceof SyntaxError) {
      res.status(400).json({ code: 'VALIDATION_ERROR', message: 'Invalid body parameters' });
      return;
    }
    deps.log.error({ err, requestId: req.id }, 'auth request failed');
    res.status(500).json({ code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' });
  });
  return router;
}

function bearerToken(req: Request): string | null {
  const m = /^bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}
