/**
 * The auth service's request plumbing: one declaration style per endpoint (`authEndpoint({...})`),
 * body/query parsing into Better Auth's 400 VALIDATION_ERROR, and the session of the caller
 * (signed cookie or bearer; cookie cache, expiry, refresh).
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from 'express';
import { z } from 'zod/v4';
import type { Deps } from '../deps.ts';
import type { EntityManager } from '../kit/db.ts';
import { findUnstorableString } from '../kit/input-guards.ts';
import { AUTH_ERRORS } from './errors.ts';
import {
  clearSessionCookies,
  findSession,
  isDueForRefresh,
  isFresh,
  readCacheCookie,
  readSignedCookie,
  refreshSession,
  setCacheCookie,
  setSessionCookies,
  payloadOf,
  readLiveSessionPayload,
  type LoadedSession,
} from './sessions.ts';
import type { SessionPayload } from './serialize.ts';
import { runStrategy } from './strategies.ts';

export interface AuthContext {
  req: Request;
  res: Response;
  deps: Deps;
  em: EntityManager;
}

export type AuthHandler = (ctx: AuthContext) => Promise<unknown>;

/** Who may call an endpoint: anyone (default), a signed-in user, or one signed in recently. */
export type AuthRequirement = 'session' | 'fresh';

/**
 * One endpoint of /api/auth, declared as data: method, path, optional session requirement (checked
 * first, so an anonymous call is a 401 whatever its body), optional body/query schemas (parsed into
 * Better Auth's 400 VALIDATION_ERROR before the handler runs), optional Express middleware (e.g. a raw
 * body parser) and the handler, which returns the JSON answer (or writes the response itself, e.g. a
 * redirect). Files export arrays of these; the router mounts them in order with `mountAuthEndpoints`.
 */
export interface AuthEndpoint {
  method: 'get' | 'post';
  path: string;
  handler: (ctx: AuthContext & { body: any; query: any; me: any }) => Promise<unknown>;
  session?: AuthRequirement;
  body?: z.ZodType;
  query?: z.ZodType;
  middleware?: RequestHandler[];
}

export function authEndpoint<
  B extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  S extends AuthRequirement | undefined = undefined,
>(def: {
  method: 'get' | 'post';
  path: string;
  session?: S;
  body?: B;
  query?: Q;
  middleware?: RequestHandler[];
  handler: (
    ctx: AuthContext & {
      body: B extends z.ZodType ? z.output<B> : undefined;
      query: Q extends z.ZodType ? z.output<Q> : undefined;
      me: S extends AuthRequirement ? LoadedSession : undefined;
    },
  ) => Promise<unknown>;
}): AuthEndpoint {
  return def as AuthEndpoint;
}

export function mountAuthEndpoints(router: Router, deps: Deps, endpoints: readonly AuthEndpoint[]) {
  for (const e of endpoints) {
    if (e.middleware?.length) router[e.method](e.path, ...e.middleware);
    endpoint(router, deps, e.method, e.path, async (ctx) => {
      const me = e.session === 'fresh' ? await requireFreshSession(ctx) : e.session === 'session' ? await requireSession(ctx) : undefined;
      const body = e.body ? parseBody(e.body, ctx.req) : undefined;
      const query = e.query ? parseQuery(e.query, ctx.req) : undefined;
      return e.handler({ ...ctx, body, query, me });
    });
  }
}

export function endpoint(router: Router, deps: Deps, method: 'get' | 'post', path: string, handler: AuthHandler) {
  router[method](path, (req: Request, res: Response, next: NextFunction) => {
    handler({ req, res, deps, em: req.em }).then((body) => {
      if (res.headersSent) return;
      res.json(body === undefined ? null : body);
    }, next);
  });
}

export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  const r = schema.safeParse(req.body ?? {});
  // Text PostgreSQL cannot store (NUL, unpaired surrogates) is invalid input, not a database error later.
  if (!r.success || findUnstorableString(req.body)) throw AUTH_ERRORS.VALIDATION_BODY();
  return r.data;
}

export function parseQuery<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  const r = schema.safeParse(req.query ?? {});
  if (!r.success || findUnstorableString(req.query)) throw AUTH_ERRORS.VALIDATION_QUERY();
  return r.data;
}

/** `true`/`false` in a query string. */
export const queryBool = z
  .union([z.boolean(), z.enum(['true', 'false']).transform((v) => v === 'true')])
  .optional();

export function requestMeta(req: Request) {
  return { ipAddress: req.ip, userAgent: req.get('user-agent') };
}

function tokenFromRequest(ctx: AuthContext): string | null {
  return readSignedCookie(ctx.deps.cfg, ctx.req);
}

declare module 'express-serve-static-core' {
  interface Request {
    authSession?: LoadedSession | null;
  }
}

/**
 * The caller's live session from the database (cookie first, then bearer). Expired sessions are
 * deleted and the cookies cleared; a remembered session a day past its last refresh is extended and
 * its cookies set again, unless `disableRefresh`.
 */
export async function currentSession(ctx: AuthContext, opts: { disableRefresh?: boolean } = {}): Promise<LoadedSession | null> {
  if (ctx.req.authSession !== undefined) return ctx.req.authSession;
  const { cfg } = ctx.deps;
  let loaded: LoadedSession | null = null;
  const cookieToken = tokenFromRequest(ctx);
  if (cookieToken) {
    const session = await findSession(ctx.em, cookieToken);
    if (session) loaded = { session, user: session.user, token: cookieToken };
    else clearSessionCookies(ctx.res, cfg);
  } else if (/^bearer\s+\S+/i.test(ctx.req.headers.authorization ?? '')) {
    loaded = (await runStrategy<LoadedSession>('session-bearer', ctx.req, ctx.res)) || null;
  }
  if (loaded && !opts.disableRefresh && isDueForRefresh(loaded.session)) {
    await refreshSession(ctx.em, loaded.session);
    if (cookieToken) setSessionCookies(ctx.res, cfg, loaded);
  }
  ctx.req.authSession = loaded;
  return loaded;
}

/** For get-session: the cookie cache when allowed and valid, else the database. */
export async function sessionPayload(
  ctx: AuthContext,
  opts: { disableCookieCache?: boolean; disableRefresh?: boolean },
): Promise<SessionPayload | null> {
  const { cfg } = ctx.deps;
  const cookieToken = tokenFromRequest(ctx);
  if (cookieToken && !opts.disableCookieCache) {
    const cached = readCacheCookie(cfg, ctx.req, cookieToken);
    if (cached) return cached;
  }
  if (cookieToken && ctx.req.authSession === undefined) {
    // The common uncached read, without the ORM; expiry and refresh go through currentSession.
    const live = await readLiveSessionPayload(ctx.em, cookieToken, opts);
    if (live) {
      setCacheCookie(ctx.res, cfg, live);
      return live;
    }
  }
  const s = await currentSession(ctx, { disableRefresh: opts.disableRefresh });
  if (!s) return null;
  const payload = payloadOf(s);
  if (cookieToken) setCacheCookie(ctx.res, cfg, payload);
  return payload;
}

export async function requireSession(ctx: AuthContext): Promise<LoadedSession> {
  const s = await currentSession(ctx);
  if (!s) throw AUTH_ERRORS.UNAUTHORIZED();
  return s;
}

export async function requireFreshSession(ctx: AuthContext): Promise<LoadedSession> {
  const s = await requireSession(ctx);
  if (!isFresh(s.session)) throw AUTH_ERRORS.SESSION_NOT_FRESH();
  return s;
}

/** After the session or its user changed: the cookies again (when the caller uses cookies). */
export function resetCookies(ctx: AuthContext, s: LoadedSession) {
  if (tokenFromRequest(ctx) === s.token) setSessionCookies(ctx.res, ctx.deps.cfg, s);
}

/** Sets or clears the active organization of a session (and its cookies when it is the caller's). */
export async function setActiveOrganization(ctx: AuthContext, s: LoadedSession, organizationId: string | null) {
  s.session.activeOrganizationId = organizationId;
  await ctx.em.flush();
  resetCookies(ctx, s);
}

/** Mails in the background: the answer never waits for (or reveals) delivery; failures are logged. */
export function deliver(ctx: AuthContext, mail: Parameters<Deps['mailer']['send']>[0]) {
  ctx.deps.mailer.send(mail).catch((err: unknown) => {
    ctx.deps.log.error({ err, requestId: ctx.req.id, subject: mail.subject }, 'auth mail failed');
  });
}

/** An absolute URL below /api/auth on the public origin. */
export function authUrl(ctx: AuthContext, pathAndQuery: string): string {
  return `${ctx.deps.cfg.PUBLIC_URL.replace(/\/$/, '')}/api/auth${pathAndQuery}`;
}

/** A redirect target (absolute or relative to PUBLIC_URL) with extra query parameters. */
export function redirectTarget(ctx: AuthContext, target: string, query: Record<string, string> = {}): string {
  const url = new URL(target, ctx.deps.cfg.PUBLIC_URL);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.href;
}
