/**
 * Request limits on /v1, as Polar documents them: per organization (its tokens share one allowance),
 * per customer (portal sessions), per user, and per client address for anonymous callers (the public
 * checkout and license-key validation). One-minute windows; every answer carries `RateLimit-Limit`,
 * `RateLimit-Remaining` and `RateLimit-Reset`; over the limit: 429 `TooManyRequests` with
 * `Retry-After`. Counters live in each API process: with N replicas behind a balancer, divide the
 * configured limits by N (docs/hardening.md). Off under NODE_ENV=test unless RATE_LIMIT_ENABLED.
 */
import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { Config } from '../config.ts';
import { ApiError } from './errors.ts';
import type { Principal } from './principals.ts';

type LimitConfig = Pick<
  Config,
  'RATE_LIMIT_ENABLED' | 'NODE_ENV' | 'API_RATE_LIMIT_PER_MINUTE' | 'API_RATE_LIMIT_ANONYMOUS_PER_MINUTE'
>;

/** Whose allowance a request spends. */
export function allowanceOf(principal: Principal, ip: string | undefined): string {
  switch (principal.kind) {
    case 'organization':
      return `organization:${principal.organizationId}`;
    case 'oauth2':
      return principal.subject.kind === 'organization'
        ? `organization:${principal.subject.organizationId}`
        : `user:${principal.subject.userId}`;
    case 'customer':
      return `customer:${principal.customerId}`;
    case 'user':
      return `user:${principal.userId}`;
    default:
      return `address:${ipKeyGenerator(ip ?? '')}`;
  }
}

export function apiRateLimits(cfg: LimitConfig): RequestHandler {
  const enabled = cfg.RATE_LIMIT_ENABLED ?? cfg.NODE_ENV !== 'test';
  if (!enabled) return (_req, _res, next) => next();
  return rateLimit({
    windowMs: 60_000,
    limit: (req: Request) =>
      req.principal.kind === 'anonymous' ? cfg.API_RATE_LIMIT_ANONYMOUS_PER_MINUTE : cfg.API_RATE_LIMIT_PER_MINUTE,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    keyGenerator: (req: Request) => allowanceOf(req.principal, req.ip),
    handler: (_req, _res, next, options) => {
      next(new ApiError(options.statusCode, 'TooManyRequests', 'Rate limit exceeded: retry after the number of seconds in Retry-After.'));
    },
    // The key is never a raw address without ipKeyGenerator; TRUST_PROXY is checked at start-up.
    validate: { keyGeneratorIpFallback: false, trustProxy: false, xForwardedForHeader: false },
  });
}
