/**
 * Rate limiting of the credential and mail routes: 3 requests per 10 s per client IP and path, counted
 * in PostgreSQL (`rate_limits`) with one atomic upsert so every API replica shares the same window.
 * Over the limit: 429 with `X-Retry-After` (seconds), as Better Auth answers.
 */
import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { Config } from '../config.ts';
import type { EntityManager } from '../kit/db.ts';
import { AUTH_ERRORS, AuthError } from './errors.ts';

export const RATE_LIMIT_WINDOW_SECONDS = 10;
export const RATE_LIMIT_MAX = 3;

/** Paths (below /api/auth) that are limited: sign-in, sign-up, two-factor, password and email routes. */
export function isLimitedPath(path: string): boolean {
  return (
    path.startsWith('/sign-in/') ||
    path.startsWith('/sign-up/') ||
    path.startsWith('/two-factor/') ||
    [
      '/change-password',
      '/set-password',
      '/forget-password',
      '/request-password-reset',
      '/reset-password',
      '/change-email',
      '/send-verification-email',
    ].includes(path)
  );
}

export function rateLimitEnabled(cfg: Pick<Config, 'RATE_LIMIT_ENABLED' | 'NODE_ENV'>): boolean {
  return cfg.RATE_LIMIT_ENABLED ?? cfg.NODE_ENV !== 'test';
}

/** Counts one request; returns the seconds to wait when it is over the limit, else null. */
export async function hit(
  em: EntityManager,
  key: string,
  max = RATE_LIMIT_MAX,
  windowSeconds = RATE_LIMIT_WINDOW_SECONDS,
): Promise<number | null> {
  // rate_limits.key is a varchar(255): a key naming a long email (was a 500) is kept as its digest.
  if (key.length > 200) key = `sha256:${createHash('sha256').update(key).digest('base64url')}`;
  const rows = await em.getConnection().execute<{ count: number; retry_after: string }[]>(
    `insert into rate_limits (key, count, window_start) values (?, 1, now())
     on conflict (key) do update set
       count = case when rate_limits.window_start <= now() - make_interval(secs => ?) then 1 else rate_limits.count + 1 end,
       window_start = case when rate_limits.window_start <= now() - make_interval(secs => ?) then now() else rate_limits.window_start end
     returning count, extract(epoch from (window_start + make_interval(secs => ?) - now())) as retry_after`,
    [key, windowSeconds, windowSeconds, windowSeconds],
  );
  const row = rows[0]!;
  // Now and then, forget counters whose window ended long ago.
  if (Math.random() < 0.01) {
    await em.getConnection().execute(`delete from rate_limits where window_start < now() - interval '1 hour'`);
  }
  if (Number(row.count) <= max) return null;
  return Math.max(1, Math.ceil(Number(row.retry_after)));
}

export function rateLimiter(cfg: Pick<Config, 'RATE_LIMIT_ENABLED' | 'NODE_ENV'>) {
  const enabled = rateLimitEnabled(cfg);
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!enabled || req.method !== 'POST' || !isLimitedPath(req.path) || !req.ip) return next();
    hit(req.em, `${req.ip}|${req.path}`).then((retryAfter) => {
      if (retryAfter === null) return next();
      const err = AUTH_ERRORS.TOO_MANY_REQUESTS();
      next(new AuthError(err.status, err.message, err.code, { 'X-Retry-After': String(retryAfter) }));
    }, next);
  };
}
