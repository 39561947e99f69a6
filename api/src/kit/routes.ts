/**
 * One declaration per endpoint: method, path, auth requirement and zod schemas for path, query, body
 * and response. `mount` wires them into Express (validation at the edge, principal checks, a forked
 * EntityManager per request); `openapi.ts` turns the same declarations into the OpenAPI document.
 */
import express, { type Request, type Response, type Router } from 'express';
import type { z } from 'zod/v4';
import type { EntityManager } from './db.ts';
import { authorize, type AuthRequirement, type Principal } from './principals.ts';
import { RequestValidationError } from './errors.ts';
import { findUnstorableString } from './input-guards.ts';
import { parseOrThrow } from './validation.ts';
import { countCharacters } from './characters.ts';
import { RawJson, sendRawJson, type SqlReader } from './read-sql.ts';

/**
 * What handlers receive as `ctx.deps`. Empty here (kit knows nothing of the modules); the composition
 * root, `deps.ts`, merges its `Deps` into it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface HandlerDeps {}

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
type Out<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface HandlerContext<P, Q, B> {
  req: Request;
  res: Response;
  params: P;
  query: Q;
  body: B;
  principal: Principal;
  /** The request's EntityManager, forked on first access (reading `ctx.em` forks it). */
  em: EntityManager;
  /** For reads through `read-sql.ts`: the request's pool, or its EntityManager once one exists; forks none. */
  sql: SqlReader;
  deps: HandlerDeps;
}

export interface RouteSpec<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  method: Method;
  /** Express-style path (`/v1/products/:id`). */
  path: string;
  summary: string;
  tags: string[];
  auth: AuthRequirement | 'public';
  params?: P;
  query?: Q;
  body?: B;
  /** Success status; 204 sends no body. */
  status?: number;
  response?: z.ZodType;
  /**
   * The handler checks the body itself (`ctx.body` is undefined; the parsed JSON is `req.body`): it
   * takes only bodies the checks below accept unchanged and calls `checkedBody(req, spec.body)` for
   * any other, so the answers stay the same.
   */
  handlerChecksBody?: boolean;
  /** Error statuses the route answers besides 400/401/403/404/413/422/429 (for the OpenAPI document). */
  errors?: number[];
  handler: (ctx: HandlerContext<Out<P>, Out<Q>, Out<B>>) => Promise<unknown>;
}

export function route<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec;
}

/** Every declared route, for the OpenAPI document. */
export const registry: RouteSpec[] = [];

/**
 * The routes' first two path segments (`/v1/orders`), lower case (Express matches paths case-insensitively),
 * or null when one of them is not literal text.
 */
function pathPrefix(path: string): string | null {
  const [, first = '', second = ''] = path.split('/', 3);
  return /[:*{}()?]/.test(first + second) ? null : `/${first}/${second}`.toLowerCase();
}

/**
 * Declares `routes` on `router`. Routes are grouped by their first two path segments, each group on a
 * router of its own, and one middleware hands a request to the group of its path: a request walks only
 * its group's routes (in their declared order), not the whole list. A path's segments are compared as
 * the routes' own patterns compare them (case-insensitive, as sent, before percent-decoding), and no
 * route outside a path's group can match it, so the same route answers as on one flat list.
 */
export function mount(router: Router, deps: HandlerDeps, routes: RouteSpec[]): void {
  const groups = new Map<string, Router>();
  const literal = routes.every((r) => pathPrefix(r.path) !== null);
  for (const spec of routes) {
    let target = router;
    if (literal) {
      const key = pathPrefix(spec.path)!;
      target = groups.get(key) ?? groups.set(key, express.Router()).get(key)!;
    }
    declare(target, deps, spec);
  }
  if (!groups.size) return;
  router.use((req, res, next) => {
    const group = groups.get(requestPrefix(req.path));
    if (group) group(req, res, next);
    else next();
  });
}

function requestPrefix(path: string): string {
  const a = path.indexOf('/', 1);
  if (a < 0) return `${path}/`.toLowerCase();
  const b = path.indexOf('/', a + 1);
  return (b < 0 ? path : path.slice(0, b)).toLowerCase();
}

function declare(router: Router, deps: HandlerDeps, spec: RouteSpec): void {
  if (!registry.includes(spec)) registry.push(spec);
  for (const schema of [spec.params, spec.query, spec.body]) countCharacters(schema);
  router[spec.method](spec.path, async (req: Request, res: Response) => {
    if (spec.auth !== 'public') authorize(req.principal, spec.auth);
    rejectUnstorableStrings(req, spec.handlerChecksBody ? ['path', 'query'] : ['path', 'query', 'body']);
    const params = spec.params ? parseOrThrow('path', spec.params, req.params) : undefined;
    const query = spec.query ? parseOrThrow('query', spec.query, req.query) : undefined;
    const body = spec.body && !spec.handlerChecksBody ? parseOrThrow('body', spec.body, req.body ?? {}) : undefined;
    const result = await spec.handler({
      req,
      res,
      params,
      query,
      body,
      principal: req.principal,
      get em() {
        return req.em;
      },
      sql: req.sql,
      deps,
    } as HandlerContext<unknown, unknown, unknown>);
    if (res.headersSent) return;
    const status = spec.status ?? 200;
    if (status === 204) res.status(204).end();
    else if (result instanceof RawJson) sendRawJson(req, res, status, result);
    else res.status(status).json(result);
  });
}

/**
 * 422 for a string PostgreSQL cannot store (NUL, an unpaired surrogate) anywhere in the path, query or
 * body, keys included: one check for every route instead of a database error (500) later.
 */
function rejectUnstorableStrings(req: Request, parts: ('path' | 'query' | 'body')[]): void {
  for (const where of parts) {
    const loc = findUnstorableString(where === 'path' ? req.params : where === 'query' ? req.query : req.body);
    if (loc) {
      throw new RequestValidationError([
        { type: 'string_unstorable', loc: [where, ...loc], msg: 'Text must not contain NUL characters or unpaired surrogates' },
      ]);
    }
  }
}

/** The body checks `mount` runs for a route (text PostgreSQL cannot store, then the schema), for a handler that checks the body itself. */
export function checkedBody<S extends z.ZodType>(req: Request, schema: S): z.output<S> {
  rejectUnstorableStrings(req, ['body']);
  return parseOrThrow('body', schema, req.body ?? {}) as z.output<S>;
}
