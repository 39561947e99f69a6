/** The Express application: /api/auth, /v1, /openapi.json, /docs, /healthz and the built UIs. */
import type { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type NextFunction, type Request, type Response } from 'express';
import compression from 'compression';
import { RequestContext } from '@mikro-orm/core';
import passport from 'passport';
import type { Connection } from '@temporalio/client';
import type { Deps } from './deps.ts';
import { cachedGetSession } from './auth/fast-path.ts';
import { authRouter } from './auth/routes.ts';
import { isForeignOrigin } from './auth/origins.ts';
import { ApiError, NotPermitted, RequestValidationError, ResourceNotFound } from './kit/errors.ts';
import { jsonDepthExceeds, JsonTooDeep } from './kit/input-guards.ts';
import { allowFraming, htmlSecurityHeaders } from './kit/security-headers.ts';
import { checkoutEmbedOrigin } from './modules/checkouts/service.ts';
import { buildOpenApi, DOCS_HTML, DOCS_SCRIPT } from './kit/openapi.ts';
import { authenticate } from './kit/principals.ts';
import { mount, registry } from './kit/routes.ts';
import type { EntityManager } from './kit/db.ts';
import type { SqlReader } from './kit/read-sql.ts';
import { allRoutes } from './modules/routes.ts';
import { webhookBacklog } from './modules/webhooks/service.ts';
import { idempotencyKeys } from './modules/idempotency/middleware.ts';
import { apiRateLimits } from './kit/rate-limits.ts';
import { publicCors } from './kit/cors.ts';
import { isDatabaseUnavailable, RETRY_AFTER_SECONDS } from './kit/unavailable.ts';
import { lockConflict } from './kit/lock-conflicts.ts';
import { mountMetrics } from './kit/metrics.ts';
import { ingestBodyReader } from './modules/events/streamed.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const VERSION = '0.1.0';

declare module 'express-serve-static-core' {
  interface Request {
    id: string;
    em: EntityManager;
    /** Reads through `kit/read-sql.ts`: `em` once it exists, else the pool (no transaction), forking none. */
    sql: SqlReader;
  }
}

/** MikroORM's request-context storage (what `RequestContext.create` runs the request in). */
const contextStorage = (RequestContext as unknown as { storage: AsyncLocalStorage<RequestContext> }).storage;

/** The request context's map of forks: the default one is forked from the request's EntityManager on first use. */
class LazyContextForks extends Map<string, EntityManager> {
  constructor(
    private readonly contextName: string,
    private readonly requestEm: () => EntityManager,
  ) {
    super();
  }
  private forking = false;
  override get(name: string): EntityManager | undefined {
    // While the fork is built it asks the context for its EntityManager: none yet, as when
    // `RequestContext.create` forked before entering the context.
    if (name === this.contextName && !super.has(name) && !this.forking) {
      this.forking = true;
      try {
        super.set(name, this.requestEm().fork({ useContext: true }) as EntityManager);
      } finally {
        this.forking = false;
      }
    }
    return super.get(name);
  }
}

/**
 * The Node request listener: the I/O-free fast paths (a cookie-cached get-session) on the raw request,
 * everything else through the Express application.
 */
export function requestListener(deps: Deps, app: express.Express): http.RequestListener {
  const fastSession = cachedGetSession(deps.cfg, deps.log);
  return (req, res) => {
    if (!fastSession(req, res)) app(req, res);
  };
}

/**
 * Request line and headers up to 64 KiB (Node's default is 16 KiB): a query at its documented maximum
 * lengths, percent-encoded, still reaches validation (a 422 naming the field), not a bare 431.
 */
const MAX_HEADER_BYTES = 64 * 1024;

/** JSON request bodies up to 1 MiB. */
const JSON_BODY_LIMIT = 1024 * 1024;

/**
 * A client gets 20 s to send its headers and 30 s for its whole request (slow senders do not hold
 * sockets and memory); idle keep-alive sockets close after 5 s.
 */
function withTimeouts(server: http.Server): http.Server {
  server.headersTimeout = 20_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Request id (`x-request-id`, the client's when well-formed) and one structured log line per request. */
export function requestLog(deps: Pick<Deps, 'log'>): express.RequestHandler {
  return (req, res, next) => {
    const incoming = req.get('x-request-id');
    req.id = incoming && /^[\w.-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader('x-request-id', req.id);
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      deps.log.info(
        {
          requestId: req.id,
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
        },
        'request',
      );
    });
    next();
  };
}

/**
 * A fresh EntityManager for every request, forked when the request first uses one (a fork builds a
 * unit of work, loaders and factories: reads that go straight to the pool never need it). The
 * request context holds a fork of it, as `RequestContext.create(req.em, next)` would, also made on
 * first use. The global EntityManager is forked as it was before any request context existed (not
 * from this request's context, which would ask for this fork again).
 */
export function requestContext(deps: Pick<Deps, 'orm'>): express.RequestHandler {
  return (req, _res, next) => {
    let em: EntityManager | undefined;
    const requestEm = () => (em ??= deps.orm.em.fork({ disableContextResolution: true }) as EntityManager);
    Object.defineProperty(req, 'em', { get: requestEm, set: (v: EntityManager) => void (em = v), configurable: true, enumerable: true });
    req.sql = {
      isInTransaction: () => em?.isInTransaction() ?? false,
      getConnection: (type) => (em ?? deps.orm.em).getConnection(type),
      // Called only inside a transaction, which only an existing EntityManager can be in: the arguments passed through as given.
      execute: ((...args: unknown[]) => {
        const e = requestEm();
        return (e.execute as unknown as (...a: unknown[]) => unknown).apply(e, args);
      }) as unknown as SqlReader['execute'],
    };
    contextStorage.run(new RequestContext(new LazyContextForks(deps.orm.em.name, requestEm)), next);
  };
}

/**
 * JSON bodies up to 1 MiB, keeping the raw bytes too: signed webhook bodies must be verified exactly as
 * received. The event ingest route's body is read as it arrives (events/streamed.ts), through this
 * parser when it must be.
 */
export function jsonBody(deps: Pick<Deps, 'cfg'>): express.RequestHandler {
  return ingestBodyReader(
    express.json({
      limit: JSON_BODY_LIMIT,
      verify: (req, _res, buf) => {
        (req as unknown as { rawBody: Buffer }).rawBody = buf;
        // Refused before JSON.parse: a deeply nested value would overflow validators and serializers.
        if (jsonDepthExceeds(buf)) throw new JsonTooDeep();
      },
    }),
    JSON_BODY_LIMIT,
    Math.max(1, Math.floor(deps.cfg.DATABASE_POOL_MAX / 4)),
  );
}

/**
 * `configure` adds routes before the not-found handler (used by tests). `app.listen` serves through
 * `requestListener`, so the fast paths run wherever the application is listened on.
 */
export function createApp(deps: Deps, configure?: (app: express.Express) => void): express.Express {
  const app = express();
  app.disable('x-powered-by');
  // No ETag on JSON answers: hashing every body (up to hundreds of KB for a page of 100) cost more
  // than the conditional requests no API client sends. Static files keep theirs (express.static).
  app.set('etag', false);
  // Only a configured proxy may report the client's address (X-Forwarded-For); by default none.
  app.set('trust proxy', deps.cfg.TRUST_PROXY);
  app.listen = ((...args: Parameters<http.Server['listen']>) =>
    withTimeouts(http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, requestListener(deps, app))).listen(...args)) as unknown as express.Express['listen'];

  app.use(requestLog(deps));

  // Prometheus: request rate, latency and errors by route template; GET /metrics (kit/metrics.ts).
  mountMetrics(app, deps);

  // Browsers on other sites may call the public checkout and customer-portal routes, nothing else.
  app.use(publicCors());

  app.use(requestContext(deps));
  app.use(jsonBody(deps));
  app.use(passport.initialize());

  app.get('/healthz', async (_req, res) => {
    const check = async <T>(fn: () => Promise<T>) => {
      const t = Date.now();
      try {
        const value = await fn();
        return { ok: true, latency_ms: Date.now() - t, value };
      } catch (err) {
        return { ok: false, latency_ms: Date.now() - t, error: (err as Error).message, value: null };
      }
    };
    // The database check is the webhook backlog's statement (webhook work older than 5 minutes that
    // nothing has picked up: 0 in normal operation): one statement per call.
    const [{ value: webhooks, ...database }, { value: _, ...temporal }] = await Promise.all([
      check(() => webhookBacklog(deps.orm.em.fork())),
      check(() => (deps.temporal.connection as Connection).healthService.check({})),
    ]);
    const ok = database.ok && temporal.ok;
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', version: VERSION, database, temporal, webhooks });
  });

  app.use('/api/auth', authRouter(deps));

  const api = express.Router();
  api.use(authenticate());
  // A session cookie is ambient: its unsafe requests must come from our own or a trusted origin (CSRF).
  api.use((req, _res, next) => {
    const unsafe = !['GET', 'HEAD', 'OPTIONS'].includes(req.method);
    if (unsafe && !req.headers.authorization && req.principal.kind === 'user' && isForeignOrigin(deps.cfg, req)) {
      return next(NotPermitted('Cross-origin request refused: send it from a trusted origin or with an access token.'));
    }
    next();
  });
  api.use('/v1', apiRateLimits(deps.cfg));
  api.use('/v1', idempotencyKeys(deps));
  mount(api, deps, allRoutes);
  app.use(api);

  app.get('/openapi.json', (_req, res) => {
    res.json(buildOpenApi(registry, { title: 'Emporia API', version: VERSION, serverUrl: deps.cfg.PUBLIC_URL }));
  });
  const pageHeaders = htmlSecurityHeaders(deps.cfg);
  app.get('/docs', pageHeaders, (_req, res) => {
    res.type('html').send(DOCS_HTML);
  });
  app.get('/docs.js', pageHeaders, (_req, res) => {
    res.type('text/javascript').send(DOCS_SCRIPT);
  });

  if (deps.cfg.SERVE_UI) serveUi(app, pageHeaders);
  configure?.(app);

  app.use((_req, _res, next) => next(ResourceNotFound('Not found')));
  app.use(errorHandler(deps));
  return app;
}

function serveUi(app: express.Express, pageHeaders: express.RequestHandler) {
  // The hosted checkout may be framed by its checkout's embed_origin (the embedded checkout).
  app.use('/checkout/:clientSecret', (req, res, next) => {
    checkoutEmbedOrigin(req.em, String(req.params.clientSecret)).then((origin) => {
      if (origin) allowFraming(res, [origin]);
      next();
    }, next);
  });
  app.use(['/dashboard', '/portal', '/checkout'], pageHeaders);
  const admin = path.join(ROOT, 'admin-ui', 'dist');
  const portal = path.join(ROOT, 'portal-ui', 'dist');
  const spa = (dir: string) => (_req: Request, res: Response, next: NextFunction) =>
    existsSync(path.join(dir, 'index.html')) ? res.sendFile(path.join(dir, 'index.html')) : next();
  app.get('/', (_req, res) => res.redirect('/dashboard/'));
  // gzip/br for the bundles and pages; Vite's content-hashed files under assets/ never change.
  app.use(['/dashboard', '/portal', '/checkout'], compression());
  const assets: Parameters<typeof express.static>[1] = {
    index: false,
    setHeaders: (res, file) => {
      if (/[\\/]assets[\\/][^\\/]+-[\w-]{8,}\.\w+$/.test(file)) res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    },
  };
  app.use('/dashboard', express.static(admin, assets));
  app.get(['/dashboard', '/dashboard/{*rest}'], spa(admin));
  app.use('/portal', express.static(portal, assets));
  app.get(['/portal', '/portal/{*rest}', '/checkout/{*rest}'], spa(portal));
}

/** Names for the HTTP errors Express and body-parser raise (any other 4xx is a BadRequest). */
const HTTP_ERROR_NAMES: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'NotPermitted',
  404: 'ResourceNotFound',
  405: 'MethodNotAllowed',
  413: 'PayloadTooLarge',
  415: 'UnsupportedMediaType',
};

/**
 * Every error becomes JSON in the documented shape, in every environment: never HTML, never a stack
 * trace or file path. Unknown routes are 404 ResourceNotFound; body-parser and routing errors keep
 * their 4xx status; anything else is a 500 carrying only the request id (details go to the log).
 */
function errorHandler(deps: Deps) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const send = (status: number, body: unknown) => {
      try {
        res.status(status).json(body);
      } catch (serializeErr) {
        deps.log.error({ err: serializeErr, requestId: req.id }, 'error response not serializable');
        res
          .status(500)
          .type('application/json')
          .send(JSON.stringify({ error: 'InternalServerError', detail: `An unexpected error occurred. Request id: ${req.id}`, request_id: req.id }));
      }
    };
    if (err instanceof ApiError) {
      if (err.status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
      send(err.status, err.toJSON());
      return;
    }
    const e = err as { type?: string; status?: number; statusCode?: number; expose?: boolean; message?: string };
    if (e?.type === 'entity.too.deep') {
      const v = new RequestValidationError([{ type: 'json_too_deep', loc: ['body'], msg: String(e.message) }]);
      send(422, v.toJSON());
      return;
    }
    if (e?.type === 'entity.parse.failed') {
      const msg = String(e.message ?? '').slice(0, 200);
      const v = new RequestValidationError([{ type: 'json_invalid', loc: ['body'], msg: `JSON decode error: ${msg}` }]);
      send(422, v.toJSON());
      return;
    }
    if (e?.type === 'entity.too.large') {
      send(413, { error: 'PayloadTooLarge', detail: 'Request body is too large' });
      return;
    }
    const status = e?.status ?? e?.statusCode;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      // body-parser, the router (malformed percent-encoding) and static files: their messages are fixed texts.
      const detail = e.expose && e.message ? String(e.message).slice(0, 200) : 'Bad request';
      send(status, { error: HTTP_ERROR_NAMES[status] ?? 'BadRequest', detail });
      return;
    }
    if (isDatabaseUnavailable(err)) {
      deps.log.warn({ err, requestId: req.id }, 'database unavailable');
      res.setHeader('Retry-After', String(RETRY_AFTER_SECONDS));
      send(503, { error: 'ServiceUnavailable', detail: 'The database is unavailable; nothing was saved. Retry after the seconds in Retry-After.' });
      return;
    }
    const conflict = lockConflict(err);
    if (conflict) deps.log.warn({ err, requestId: req.id, sqlState: conflict.sqlState, statement: conflict.statement }, conflict.message);
    else deps.log.error({ err, requestId: req.id }, 'unhandled error');
    send(500, {
      error: 'InternalServerError',
      detail: `An unexpected error occurred. Request id: ${req.id}`,
      request_id: req.id,
    });
  };
}
