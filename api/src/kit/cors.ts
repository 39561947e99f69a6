/**
 * Cross-origin access, open only where a browser on another site legitimately calls the API: the
 * public checkout (`/v1/checkouts/client/…`, authorized by the checkout's client secret) and the
 * customer portal (`/v1/customer-portal/…`, authorized by a customer session bearer token, including
 * license-key validation). Any origin may call them, without cookies (`Access-Control-Allow-Credentials`
 * is never sent), so a site cannot act with a visitor's seller session. Every other route sends no
 * CORS headers: browsers keep other origins from reading them, and preflights there are not answered.
 */
import type { RequestHandler } from 'express';

const PUBLIC_PREFIXES = ['/v1/checkouts/client/', '/v1/customer-portal/'];

export function isCrossOriginPublic(path: string): boolean {
  return PUBLIC_PREFIXES.some((p) => path.startsWith(p));
}

export function publicCors(): RequestHandler {
  return (req, res, next) => {
    if (!req.headers.origin || !isCrossOriginPublic(req.path)) return next();
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Retry-After, Idempotent-Replayed, X-Request-Id');
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method']) {
      res.setHeader('Access-Control-Allow-Methods', 'GET, POST, PATCH, DELETE');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, Idempotency-Key');
      res.setHeader('Access-Control-Max-Age', '600');
      res.status(204).end();
      return;
    }
    next();
  };
}
