/**
 * Prometheus metrics of the API (prom-client): request rate and latency by route template, errors by
 * error name and status, and the Node process's own series. `mountMetrics` adds the recording
 * middleware and `GET /metrics`; names and labels are listed in docs/operations.md ("Metrics").
 *
 * Who may scrape: with METRICS_TOKEN set, a request bearing it (`Authorization: Bearer …`); without
 * it, only clients on the loopback interface (the socket's address, not X-Forwarded-For).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type express from 'express';
import type { Request, Response } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Config } from '../config.ts';
import { constantTimeEqual } from './crypto.ts';
import { registry as routeRegistry } from './routes.ts';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/** Whether a scrape request may read the metrics (token when configured, else loopback only). */
export function scrapeAllowed(token: string | undefined, req: IncomingMessage): boolean {
  if (token) {
    const header = req.headers.authorization ?? '';
    return header.startsWith('Bearer ') && constantTimeEqual(header.slice('Bearer '.length), token);
  }
  return LOOPBACK.has(req.socket.remoteAddress ?? '');
}

/** Answers a scrape with the registry's text, or 401/403 when the client may not read it. */
export async function serveScrape(token: string | undefined, registry: Registry, req: IncomingMessage, res: ServerResponse, extra?: () => Promise<string>) {
  if (!scrapeAllowed(token, req)) {
    res.statusCode = token ? 401 : 403;
    res.setHeader('content-type', 'application/json');
    if (token) res.setHeader('WWW-Authenticate', 'Bearer');
    res.end(JSON.stringify({ error: token ? 'Unauthorized' : 'NotPermitted', detail: token ? 'Metrics require the metrics token' : 'Metrics are served to loopback clients only' }));
    return;
  }
  const body = (await registry.metrics()) + (extra ? await extra() : '');
  res.statusCode = 200;
  res.setHeader('content-type', registry.contentType);
  res.end(body);
}

/** Route templates of the declared /v1 routes, for requests that failed before their route ran (401, 422 of a guard). */
function templateMatcher() {
  let compiled: { method: string; re: RegExp; path: string }[] | null = null;
  return (method: string, pathname: string): string | null => {
    compiled ??= routeRegistry.map((r) => ({
      method: r.method.toUpperCase(),
      path: r.path,
      re: new RegExp(`^${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:\w+/g, '[^/]+')}/?$`),
    }));
    const hit = compiled.find((c) => c.method === method && c.re.test(pathname));
    return hit?.path ?? null;
  };
}

/** The label of a request's route: its template (`/v1/orders/:id`), never the raw path. */
function routeLabel(req: Request, match: ReturnType<typeof templateMatcher>): string {
  const path = req.route?.path;
  if (typeof path === 'string') return `${req.baseUrl}${path}`;
  const pathname = req.originalUrl.split('?')[0] ?? '';
  const declared = match(req.method, pathname);
  if (declared) return declared;
  for (const prefix of ['/dashboard', '/portal', '/checkout', '/api/auth']) {
    if (pathname === prefix || pathname.startsWith(`${prefix}/`)) return `${prefix}/*`;
  }
  return 'unmatched';
}

export interface ApiMetrics {
  registry: Registry;
  requests: Counter<'method' | 'route' | 'status_code'>;
  duration: Histogram<'method' | 'route'>;
  errors: Counter<'route' | 'status_code' | 'error'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'emporia_api_' });
  return {
    registry,
    requests: new Counter({
      name: 'emporia_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status code',
      labelNames: ['method', 'route', 'status_code'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'emporia_http_request_duration_seconds',
      help: 'Time from request to the end of the response, by method and route template',
      labelNames: ['method', 'route'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    errors: new Counter({
      name: 'emporia_http_errors_total',
      help: 'Responses with status >= 400, by route template, status code and error name (the body\'s "error")',
      labelNames: ['route', 'status_code', 'error'] as const,
      registers: [registry],
    }),
  };
}

/** Records every request of `app` and serves `GET /metrics`; call before the routes are added. */
export function mountMetrics(app: express.Express, deps: { cfg: Pick<Config, 'METRICS_TOKEN'> }, metrics: ApiMetrics = createApiMetrics()): ApiMetrics {
  const match = templateMatcher();
  app.get('/metrics', (req, res, next) => {
    serveScrape(deps.cfg.METRICS_TOKEN, metrics.registry, req, res).catch(next);
  });
  app.use((req: Request, res: Response, next) => {
    const started = process.hrtime.bigint();
    // The error name of the documented error shape ({ error, detail }), as the handler writes it.
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const name = (body as { error?: unknown } | null)?.error;
      if (typeof name === 'string') res.locals.metricsError = name;
      return json(body);
    };
    res.on('finish', () => {
      const route = routeLabel(req, match);
      const status = String(res.statusCode);
      metrics.requests.inc({ method: req.method, route, status_code: status });
      metrics.duration.observe({ method: req.method, route }, Number(process.hrtime.bigint() - started) / 1e9);
      if (res.statusCode >= 400) {
        const error = typeof res.locals.metricsError === 'string' ? res.locals.metricsError : 'none';
        metrics.errors.inc({ route, status_code: status, error });
      }
    });
    next();
  });
  return metrics;
}
