/**
 * Reads without the ORM: PostgreSQL builds the response's JSON and returns it as text, one statement
 * per request, and the route sends that text as it is (no hydration, no JSON.parse/JSON.stringify).
 *
 * A module provides the SQL of its read model as an expression (`products/read-sql.ts`
 * `productJsonSql`, `benefits/read-sql.ts` `benefitJsonSql`) and calls `jsonPage` for a list or
 * `jsonOne` for a single record. The JSON must be exactly what the module's `serializeX` returns:
 * the module's tests compare both on the same rows.
 *
 * Fragments here never contain `?` (the statement's placeholders): values that are not user input
 * (a configured URL) are embedded with `sqlLiteral`, everything else is a parameter.
 *
 * Outside a transaction the statement goes to the ORM's `pg` pool as a named prepared statement:
 * PostgreSQL plans a statement of this size in several milliseconds (more than it takes to run it),
 * and a prepared one is planned once per connection. Inside a transaction it runs on the
 * transaction's connection through `em.execute`.
 */
import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Pool } from 'pg';
import type { EntityManager } from './db.ts';
import type { Page } from './pagination.ts';

/** Distinct statement texts prepared by this process; past the limit, statements run unprepared. */
const preparedNames = new Map<string, string>();
const MAX_PREPARED = 200;

/**
 * What a read needs of an EntityManager: whether it is in a transaction (then `execute` on its
 * connection) and its connection's pool otherwise. An EntityManager is one; a route's `ctx.sql` is one
 * that forks no EntityManager for a read that only goes to the pool.
 */
export type SqlReader = Pick<EntityManager, 'isInTransaction' | 'getConnection' | 'execute'>;

/** Runs `sql` (`?` placeholders) and returns its rows. */
export async function query<T>(em: SqlReader, sql: string, params: unknown[]): Promise<T[]> {
  if (em.isInTransaction()) return em.execute<T[]>(sql, params);
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED) {
    name = `read_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
    preparedNames.set(text, name);
  }
  const res = await pool.query(name ? { name, text, values: params } : { text, values: params });
  return res.rows as T[];
}

/**
 * A response body that is already JSON text; `mount` (kit/routes.ts) sends it unchanged. Either one
 * text, or UTF-8 chunks (kept items) written to the socket as they are, without joining or encoding
 * them again per request.
 */
export class RawJson {
  private body: string | Buffer[];
  constructor(body: string | Buffer[]) {
    this.body = body;
  }

  get text(): string {
    if (typeof this.body !== 'string') this.body = Buffer.concat(this.body).toString('utf8');
    return this.body;
  }

  /** The chunks, or null for a text body. */
  get chunks(): Buffer[] | null {
    return typeof this.body === 'string' ? null : this.body;
  }
}

/**
 * Sends JSON text as the response body, with the headers `res.send` would set (`Content-Type:
 * application/json; charset=utf-8`, `Content-Length`), the text handed to the socket as it is:
 * `res.send` copies a body of 1,000 characters or more into a new Buffer first, and those copies
 * (a page of orders is 66-660 KB) made the API's heap collect its old generation every few hundred
 * requests. No ETag (the app has them off) and no body for HEAD, as `res.send`.
 */
export function sendRawJson(req: Request, res: Response, status: number, body: string | RawJson): void {
  res.status(status).type('application/json');
  const chunks = typeof body === 'string' ? null : body.chunks;
  if (!chunks) {
    const text = typeof body === 'string' ? body : body.text;
    res.setHeader('Content-Length', Buffer.byteLength(text, 'utf8'));
    if (req.method === 'HEAD') res.end();
    else res.end(text, 'utf8');
    return;
  }
  let length = 0;
  for (const c of chunks) length += c.length;
  res.setHeader('Content-Length', length);
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  // One writev for the headers and every chunk.
  res.cork();
  for (const c of chunks) res.write(c);
  res.end();
  res.uncork();
}

/** A text value as an SQL string literal (standard_conforming_strings: only `'` is special). */
export function sqlLiteral(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

/** An SQL timestamptz expression as JSON text the way `Date#toISOString()` writes it (ms, `Z`); null stays null. */
export function isoSql(expr: string): string {
  return `to_char(${expr} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/**
 * A page's `limit ... offset ...` and its parameters. The first pages' bounds are literals: with them
 * PostgreSQL's generic plan of a prepared page costs what it is (10 rows, not a tenth of the table),
 * so it keeps that plan instead of planning the statement again on every execution (a custom plan,
 * 1-2 ms of PostgreSQL CPU for an orders page). Later pages take parameters, so that paging through a
 * large list does not prepare a statement per page.
 */
export function pageBounds(page: Page): { sql: string; params: number[] } {
  const offset = (page.page - 1) * page.limit;
  if (page.page <= LITERAL_PAGES && Number.isSafeInteger(page.limit) && Number.isSafeInteger(offset)) {
    return { sql: `limit ${page.limit} offset ${offset}`, params: [] };
  }
  return { sql: 'limit ? offset ?', params: [page.limit, offset] };
}
const LITERAL_PAGES = 3;

/** The query's `text` rewrite of the body, or the body as it is. */
const bodyText = (q: { text?: (textExpr: string) => string }) => q.text ?? ((t: string) => t);

export interface JsonPageQuery {
  /**
   * The matched rows: `select <alias>.id, <the columns orderBy uses> from ... where ...`. Its
   * placeholders are `?`, their values in `params`.
   */
  matched: string;
  params: unknown[];
  /** ORDER BY over the columns of `matched` (alias `m`), ending with a unique key (`m.id asc`). */
  orderBy: string;
  /** The JSON expression of one item given the expression of its id (e.g. `productJsonSql`). */
  item: (idExpr: string) => string;
  /** Rewrites the body's JSON text (an SQL text expression) once, after it is built (`products/read-sql.ts` `withMediaUrls`). */
  text?: (textExpr: string) => string;
}

/**
 * One page of a list as the response body `{"items": [...], "pagination": {"total_count",
 * "max_page"}}` (what `paginated` builds), in one statement: the count and the page's items come
 * from the same `matched` rows.
 */
export async function jsonPage(em: SqlReader, q: JsonPageQuery, page: Page): Promise<RawJson> {
  // `m` is inlined into both the page and the count (not materialized): the page is a top-N the
  // planner can take from an index in order, and the count an index-only scan, instead of sorting
  // every matched row to number them.
  const bounds = pageBounds(page);
  const sql = `with m as not materialized (${q.matched}),
    pg as (select * from m order by ${q.orderBy} ${bounds.sql}),
    c as (select count(*) as t from m)
    select ${bodyText(q)(`json_build_object(
      'items', coalesce((select json_agg(${q.item('m.id')} order by ${q.orderBy}) from pg m), '[]'::json),
      'pagination', json_build_object('total_count', c.t, 'max_page', ceil(c.t / ?::numeric)::int)
    )::text`)} as body from c`;
  const rows = await query<{ body: string }>(em, sql, [...q.params, ...bounds.params, page.limit]);
  return new RawJson(rows[0]!.body);
}

/**
 * One record's JSON, or null when `where` (over alias `x` of `table`) matches no row: the caller
 * answers 404. `where` must include the caller's scope (organization ids).
 */
export interface JsonOneQuery {
  /** The table, alias `x` in `where`. */
  table: string;
  /** Over alias `x`: the record's id and the caller's scope (organization ids). */
  where: string;
  params: unknown[];
  /** The JSON expression of the record given the expression of its id. */
  item: (idExpr: string) => string;
  /** Rewrites the body's JSON text (an SQL text expression) once, after it is built. */
  text?: (textExpr: string) => string;
}

export async function jsonOne(em: SqlReader, q: JsonOneQuery): Promise<RawJson | null> {
  const rows = await query<{ body: string }>(
    em,
    `select ${bodyText(q)(`${q.item('x.id')}::text`)} as body from ${q.table} x where ${q.where} limit 1`,
    q.params,
  );
  return rows.length ? new RawJson(rows[0]!.body) : null;
}

/** `in (?, ?, ...)` for a list of values, or `false` for an empty list; pushes the values onto `params`. */
export function sqlIn(column: string, values: readonly unknown[], params: unknown[]): string {
  if (!values.length) return 'false';
  params.push(...values);
  return `${column} in (${values.map(() => '?').join(', ')})`;
}
