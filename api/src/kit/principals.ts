/**
 * Who is calling. One middleware turns any credential into a typed principal:
 * - user session (cookie from /api/auth, or `Authorization: Bearer <session token>`)
 * - organization access token (`Bearer polar_oat_…`)
 * - OAuth2 access token (`Bearer polar_at_…`)
 * - customer session token (`Bearer polar_cst_…`)
 * Bearer tokens are checked by a passport strategy; each kind has a resolver registered by its module.
 */
import type { Request, RequestHandler } from 'express';
import passport from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import type { EntityManager } from './db.ts';
import { Unauthorized, NotPermitted } from './errors.ts';

export type UserPrincipal = { kind: 'user'; userId: string; sessionId: string; scopes: Set<string> };
export type OrganizationPrincipal = {
  kind: 'organization';
  organizationId: string;
  tokenId: string;
  scopes: Set<string>;
};
export type OAuth2Principal = {
  kind: 'oauth2';
  subject: { kind: 'user'; userId: string } | { kind: 'organization'; organizationId: string };
  tokenId: string;
  scopes: Set<string>;
};
export type CustomerPrincipal = {
  kind: 'customer';
  customerId: string;
  organizationId: string;
  sessionId: string;
  scopes: Set<string>;
  /**
   * Set for the session a checkout confirmation returns: it reaches only what that checkout bought
   * (modules/customer-portal/scope.ts). Absent or null: a full customer session.
   */
  checkoutId?: string | null;
};
export type Anonymous = { kind: 'anonymous'; scopes: Set<string> };
export type Principal = UserPrincipal | OrganizationPrincipal | OAuth2Principal | CustomerPrincipal | Anonymous;
export type PrincipalKind = Principal['kind'];

export const ANONYMOUS: Anonymous = { kind: 'anonymous', scopes: new Set() };

/** Resolves a token of one kind; returns null when it is unknown, expired or revoked. */
export type TokenResolver = (em: EntityManager, token: string) => Promise<Principal | null>;

const bearerResolvers: { prefix: string; resolve: TokenResolver }[] = [];
let sessionResolver: TokenResolver | undefined;
let cookieReader: ((req: Request) => string | null) | undefined;

/** Registers a resolver for bearer tokens starting with `prefix` (longest prefix wins). */
export function registerBearerResolver(prefix: string, resolve: TokenResolver): void {
  const existing = bearerResolvers.findIndex((r) => r.prefix === prefix);
  if (existing >= 0) bearerResolvers.splice(existing, 1);
  bearerResolvers.push({ prefix, resolve });
  bearerResolvers.sort((a, b) => b.prefix.length - a.prefix.length);
}

/** Registers how user sessions are found (by raw session token) and how the cookie is read. */
export function registerSessionResolver(resolve: TokenResolver, readCookie: (req: Request) => string | null): void {
  sessionResolver = resolve;
  cookieReader = readCookie;
}

async function resolveBearer(em: EntityManager, token: string): Promise<Principal | null> {
  const match = bearerResolvers.find((r) => token.startsWith(r.prefix));
  if (match) return match.resolve(em, token);
  // Not a prefixed API token: a Better Auth style session token sent as a bearer.
  return sessionResolver ? sessionResolver(em, token) : null;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal: Principal;
  }
}

passport.use(
  'bearer',
  new BearerStrategy({ passReqToCallback: true }, (req: Request, token: string, done: (err: Error | null, principal?: Principal | false) => void) => {
    resolveBearer(req.em, token).then(
      (principal) => done(null, principal ?? false),
      (err: unknown) => done(err as Error),
    );
  }),
);

/**
 * Sets `req.principal` for every request. A bearer token that does not resolve is a 401 right away;
 * no credential at all leaves the caller anonymous, and routes decide whether that is enough.
 */
export function authenticate(): RequestHandler {
  return (req, res, next) => {
    req.principal = ANONYMOUS;
    // HTTP Basic carries OAuth2 client credentials, which the routes taking them check themselves.
    if (req.headers.authorization && /^basic\s/i.test(req.headers.authorization)) return next();
    if (req.headers.authorization) {
      if (!/^bearer\s+\S+/i.test(req.headers.authorization)) return next(Unauthorized('Invalid authorization header'));
      return passport.authenticate('bearer', { session: false }, (err: unknown, principal: Principal | false) => {
        if (err) return next(err);
        if (!principal) return next(Unauthorized('Invalid or expired token'));
        req.principal = principal;
        next();
      })(req, res, next);
    }
    const cookieToken = cookieReader?.(req);
    if (cookieToken && sessionResolver) {
      return sessionResolver(req.em, cookieToken).then((principal) => {
        if (principal) req.principal = principal;
        next();
      }, next);
    }
    next();
  };
}

export interface AuthRequirement {
  /** Principal kinds allowed on the route. */
  kinds: PrincipalKind[];
  /** Every listed scope is needed (a user session holds them all). */
  scopes?: string[];
}

export function authorize(principal: Principal, req: AuthRequirement): void {
  if (!req.kinds.includes(principal.kind)) {
    if (principal.kind === 'anonymous') throw Unauthorized();
    throw NotPermitted('This credential cannot be used on this route');
  }
  // A user's own session (web_default) may do anything the user's memberships allow.
  if (principal.scopes.has('web_default')) return;
  const missing = (req.scopes ?? []).filter((s) => !principal.scopes.has(s));
  if (missing.length) throw NotPermitted(`Missing scope: ${missing.join(', ')}`);
}
