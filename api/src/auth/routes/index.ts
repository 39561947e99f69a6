/**
 * The auth service at /api/auth, wire-compatible with the Better Auth 1.2 REST API as its client calls
 * it (camelCase JSON, `{code, message}` errors, cookie sessions), with the username and organization
 * (teams) plugins. Order of the checks on every request: rate limit → trusted origins → route.
 */
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type { Deps } from '../../deps.ts';
import { registerSessionResolver } from '../../kit/principals.ts';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from '../../kit/unavailable.ts';
import { AUTH_ERRORS, AuthError } from '../errors.ts';
import { checkRedirectTargets, checkRequestOrigin } from '../origins.ts';
import { rateLimiter } from '../rate-limit.ts';
import { readSignedCookie, resolveSessionPrincipal } from '../sessions.ts';
import { setBearerSecret } from '../strategies.ts';
import { mountAuthEndpoints, type AuthEndpoint } from '../http.ts';
import { authPaymentsEndpoints } from '../../modules/auth-payments/endpoints.ts';
import { accountEndpoints } from './account.ts';
import { coreEndpoints } from './core.ts';
import { invitationEndpoints } from './organization-invitations.ts';
import { memberEndpoints } from './organization-members.ts';
import { teamEndpoints } from './organization-teams.ts';
import { socialEndpoints } from '../social/routes.ts';
import { passkeyEndpoints } from '../passkeys/routes.ts';
import { organizationEndpoints } from './organizations.ts';
import { twoFactorEndpoints } from '../two-factor/endpoints.ts';
import { adminEndpoints } from '../admin/endpoints.ts';

/** Every endpoint of /api/auth, mounted in this order. */
export const authEndpoints: AuthEndpoint[] = [
  ...coreEndpoints,
  ...accountEndpoints,
  ...organizationEndpoints,
  ...memberEndpoints,
  ...invitationEndpoints,
  ...teamEndpoints,
  ...twoFactorEndpoints,
  ...adminEndpoints,
  ...authPaymentsEndpoints,
  ...socialEndpoints,
  ...passkeyEndpoints,
];

export function authRouter(deps: Deps): Router {
  const { cfg } = deps;
  setBearerSecret(cfg.SECRET);
  registerSessionResolver(resolveSessionPrincipal, (req) => readSignedCookie(cfg, req));

  const router = express.Router();
  // Answers carry session tokens and personal data: never cached by browsers or proxies.
  router.use((_req: Request, res: Response, next: NextFunction) => {
    res.setHeader('Cache-Control', 'no-store');
    next();
  });
  router.use(rateLimiter(cfg));
  router.use((req: Request, _res: Response, next: NextFunction) => {
    try {
      if (req.method === 'POST') {
        checkRequestOrigin(cfg, req);
        checkRedirectTargets(cfg, req);
      }
      next();
    } catch (err) {
      next(err);
    }
  });

  mountAuthEndpoints(router, deps, authEndpoints);

  router.use((_req, _res, next) => next(AUTH_ERRORS.NOT_FOUND()));
  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    if (err instanceof AuthError) {
      for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
      res.status(err.status).json({ code: err.code, message: err.message });
      return;
    }
    const e = err as { type?: string };
    if (err instanceof SyntaxError || e?.type === 'entity.parse.failed') {
      res.status(400).json({ code: 'VALIDATION_ERROR', message: 'Invalid body parameters' });
      return;
    }
    if (isDatabaseUnavailable(err)) {
      // Nothing was saved; the same request can succeed once PostgreSQL is back.
      deps.log.warn({ err, requestId: req.id }, 'database unavailable');
      res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      res.status(503).json({ code: 'SERVICE_UNAVAILABLE', message: 'Service temporarily unavailable. Retry after the seconds in Retry-After.' });
      return;
    }
    deps.log.error({ err, requestId: req.id }, 'auth request failed');
    res.status(500).json({ code: 'INTERNAL_SERVER_ERROR', message: 'Internal server error' });
  });
  return router;
}
