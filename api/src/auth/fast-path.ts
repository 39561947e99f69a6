/**
 * The hot path of `GET /api/auth/get-session`: a browser polling its session with a valid cookie cache.
 * It runs on the raw Node request, before Express and every middleware (request context, body parser,
 * passport, principal resolution, rate limiter, origin checks — none of which apply to this GET), and
 * does no I/O: parse the Cookie header, verify the token cookie's HMAC and the cache cookie's HMAC,
 * check expiries and that the cache belongs to the token, answer the cached JSON.
 *
 * Anything else — no or stale cache, `disableCookieCache=true`, a bearer token only, any other query —
 * returns false and goes through the Express route (`routes/core.ts`), which reads the session from the
 * database and sets a fresh cache. Revocation works as Better Auth's cookie cache defines it: a revoked
 * session is still answered from a cache cookie until that cookie expires (60 s), never longer.
 *
 * Cache hits log at debug level only (a polling endpoint, no side effect); everything else keeps the
 * per-request log line of `app.ts`.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Config } from '../config.ts';
import type { Logger } from '../kit/logger.ts';
import { readCacheCookieHeader } from './sessions.ts';

const PATH = '/api/auth/get-session';
/** Query strings the fast path answers as the route would (the cache allowed; refresh is moot on a hit). */
const ALLOWED_QUERIES = new Set(
  ['', 'disableCookieCache=false'].flatMap((c) =>
    ['', 'disableRefresh=true', 'disableRefresh=false'].flatMap((r) => (c && r ? [`${c}&${r}`, `${r}&${c}`] : [c || r])),
  ),
);
const REQUEST_ID = /^[\w.-]{1,128}$/;

export function cachedGetSession(cfg: Pick<Config, 'SECRET' | 'PUBLIC_URL'>, log: Logger) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET') return false;
    const url = req.url;
    if (!url || !url.startsWith(PATH)) return false;
    if (url.length > PATH.length) {
      if (url.charCodeAt(PATH.length) !== 63 /* ? */ || !ALLOWED_QUERIES.has(url.slice(PATH.length + 1))) return false;
    }
    const cookie = req.headers.cookie;
    if (!cookie) return false;
    const cached = readCacheCookieHeader(cfg, cookie);
    if (!cached) return false;

    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.writeHead(200, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(cached.json),
      'cache-control': 'no-store',
      'x-request-id': id,
    });
    res.end(cached.json);
    if (log.isLevelEnabled('debug')) log.debug({ requestId: id, method: 'GET', path: PATH, status: 200, cache: true }, 'request');
    return true;
  };
}
