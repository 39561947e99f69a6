/**
 * Who is calling. One middleware turns any credential into a typed principal:
 * - user session (cookie from /api/auth, or `Authorization: Bearer <session token>`)
 * - organization access token (`Bearer polar_oat_…`)
 * - OAuth2 access token (`Bearer polar_at_…`)
 * - customer session token (`Bearer polar_cst_…`)
 * Bearer tokens are read the way passport-http-bearer reads them (`bearerToken`); each kind has a
 * resolver registered by its module.
 */
import { hash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { EntityManager } from './db.ts';
import { Unauthorized, NotPermitted } from './errors.ts';

export type UserPrincipal = { kind: 'user'; userId: string; sessionId: string; scopes: Set<string> };
export type OrganizationPrincipal = {
  kind: 'organization';
  organizationId: string;
  tokenId: string;
  scopes: Set<string>;
  /** When the token stops working (null: never); a cached principal is not used past it. */
  expiresAt?: Date | null;
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

const bearerResolvers: { prefix: string; resolve: TokenResolver; cacheMs: number }[] = [];
let sessionResolver: TokenResolver | undefined;
let cookieReader: ((req: Request) => string | null) | undefined;

/**
 * Registers a resolver for bearer tokens starting with `prefix` (longest prefix wins). With `cacheMs`,
 * a token that resolved is answered from memory for that long (never past the principal's
 * `expiresAt`): the module revoking or changing such a token calls `forgetCachedPrincipals` in the
 * same process, and other processes see the change within `cacheMs`.
 */
export function registerBearerResolver(prefix: string, resolve: TokenResolver, opts: { cacheMs?: number } = {}): void {
  const existing = bearerResolvers.findIndex((r) => r.prefix === prefix);
  if (existing >= 0) bearerResolvers.splice(existing, 1);
  bearerResolvers.push({ prefix, resolve, cacheMs: opts.cacheMs ?? 0 });
  bearerResolvers.sort((a, b) => b.prefix.length - a.prefix.length);
}

/**
 * Principals of recently resolved tokens, keyed by the token's SHA-256 (the raw token is not kept),
 * oldest first; unknown, expired and revoked tokens are never cached, so they always reach the database.
 */
const principalCache = new Map<string, { principal: Principal; until: number }>();
const PRINCIPAL_CACHE_MAX = 10_000;

/** Drops cached principals `match` selects (a revoked token, changed scopes); none left is answered from memory. */
export function forgetCachedPrincipals(match: (p: Principal) => boolean): void {
  for (const [key, entry] of principalCache) if (match(entry.principal)) principalCache.delete(key);
}

/** `em` is called only when the token must be looked up (a cache hit forks no EntityManager). */
async function resolveCached(em: () => EntityManager, token: string, r: { resolve: TokenResolver; cacheMs: number }): Promise<Principal | null> {
  if (!r.cacheMs) return r.resolve(em(), token);
  // The token's SHA-256 in one call (no Hash object per request).
  const key = hash('sha256', token, 'base64');
  const now = Date.now();
  const hit = principalCache.get(key);
  if (hit && hit.until > now) return hit.principal;
  if (hit) principalCache.delete(key);
  const principal = await r.resolve(em(), token);
  if (principal) {
    const expires = principal.kind === 'organization' ? principal.expiresAt?.getTime() ?? Infinity : Infinity;
    if (principalCache.size >= PRINCIPAL_CACHE_MAX) principalCache.delete(principalCache.keys().next().value!);
    principalCache.set(key, { principal, until: Math.min(now + r.cacheMs, expires) });
  }
  return principal;
}

/** Registers how user sessions are found (by raw session token) and how the cookie is read. */
export function registerSessionResolver(resolve: TokenResolver, readCookie: (req: Request) => string | null): void {
  sessionResolver = resolve;
  cookieReader = readCookie;
}

async function resolveBearer(em: () => EntityManager, token: string): Promise<Principal | null> {
  const match = bearerResolvers.find((r) => token.startsWith(r.prefix));
  if (match) return resolveCached(em, token, match);
  // Not a prefixed API token: a Better Auth style session token sent as a bearer.
  return sessionResolver ? sessionResolver(em(), token) : null;
}

declare module 'express-serve-static-core' {
  interface Request {
    principal: Principal;
  }
}

/** Why a request's bearer credential is refused before any token is looked up. */
const MALFORMED = Symbol('malformed');

/**
 * The token of a request with an `Authorization` header, read exactly as passport-http-bearer reads it:
 * the header split on single spaces must have two parts (`Bearer <token>`, scheme case-insensitive),
 * and an `access_token` in the body or query is taken when the header did not carry one, refused when
 * it did. `MALFORMED` when there is no token or two of them.
 */
function bearerToken(req: Request): unknown {
  let token: unknown;
  const parts = req.headers.authorization!.split(' ');
  if (parts.length !== 2) return MALFORMED;
  if (/^Bearer$/i.test(parts[0]!)) token = parts[1];
  const body = req.body as { access_token?: unknown } | undefined;
  if (body && body.access_token) {
    if (token) return MALFORMED;
    token = body.access_token;
  }
  const query = req.query as { access_token?: unknown } | undefined;
  if (query && query.access_token) {
    if (token) return MALFORMED;
    token = query.access_token;
  }
  return token ? token : MALFORMED;
}

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
      const token = bearerToken(req);
      if (token === MALFORMED) return next(Unauthorized('Invalid or expired token'));
      return resolveBearer(() => req.em, token as string).then((principal) => {
        if (!principal) return next(Unauthorized('Invalid or expired token'));
        req.principal = principal;
        next();
      }, next);
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
