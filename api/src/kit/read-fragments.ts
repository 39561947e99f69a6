/**
 * Pages of items built from several rows (an order embeds its customer, product, price, discount and
 * subscription) without rebuilding each item's JSON on every read: PostgreSQL returns the page's ids,
 * each with its version (the row versions, `xmin`, of every row the item is built from, read in the
 * same statement and snapshot as the page, and the count), and the API joins the items' JSON text
 * kept by (kind, id, version). Items whose version is not kept are built by one more statement for
 * those only, and kept if it is the version the page saw; if one changed in between, the full statement
 * (`jsonPage`) answers. A single record (`splicedOne`, the by-id reads) is answered the same way, from
 * the same kept texts.
 *
 * Never stale: every read still goes to PostgreSQL and sees every committed write, from this process,
 * another API process or the worker: a write to any of the item's rows gives that row a new `xmin`
 * (the writing transaction's id), so the page names a version not kept yet. Only committed versions
 * are kept (reads inside a transaction, which may see their own uncommitted rows, take the full
 * statement); a version is used at most `MAX_AGE_MS`, far less than the ~4 billion transactions after
 * which PostgreSQL could hand out the same transaction id again. The kept texts are per pool (one
 * database) and bounded by bytes, least recently used first out; they are kept and written to the
 * socket as UTF-8, so a page is not joined or encoded again per request.
 *
 * The body is byte for byte the one the full statement builds: the items are its items' text, joined
 * the way `json_agg` / `json_build_object` write them (`tests/reads/fragments.test.ts`).
 */
import type { Pool } from 'pg';
import { jsonOne, jsonPage, pageBounds, query, RawJson, sqlIn, type JsonOneQuery, type JsonPageQuery, type SqlReader } from './read-sql.ts';
import type { Page } from './pagination.ts';

/** How long a kept version is used at most. */
const MAX_AGE_MS = 10 * 60_000;
/** Bytes of UTF-8 kept per pool (keys counted as their length). */
const MAX_CHARS = 32 * 1024 * 1024;

/** An embedded record's JSON text by (kind, id, version), least recently used first out. */
export class FragmentCache {
  private readonly map = new Map<string, { text: Buffer; at: number }>();
  private chars = 0;
  constructor(private readonly maxChars = MAX_CHARS, private readonly maxAgeMs = MAX_AGE_MS) {}

  get(key: string, now: number): Buffer | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    if (now - hit.at > this.maxAgeMs) {
      this.chars -= hit.text.length + key.length;
      return undefined;
    }
    this.map.set(key, hit);
    return hit.text;
  }

  set(key: string, text: Buffer, now: number): void {
    const old = this.map.get(key);
    if (old) {
      this.map.delete(key);
      this.chars -= old.text.length + key.length;
    }
    const size = text.length + key.length;
    if (size > this.maxChars) return;
    this.map.set(key, { text, at: now });
    this.chars += size;
    for (const [k, v] of this.map) {
      if (this.chars <= this.maxChars) break;
      this.map.delete(k);
      this.chars -= v.text.length + k.length;
    }
  }

  get size(): number {
    return this.map.size;
  }
}

const caches = new WeakMap<Pool, FragmentCache>();
const ITEMS_OPEN = Buffer.from('{"items" : [');
const ITEM_SEPARATOR = Buffer.from(', ');

/** The kept fragments of the database behind `em`'s pool. */
async function cacheOf(em: SqlReader): Promise<FragmentCache> {
  const pool = await (em.getConnection() as unknown as { getNativeClient(): Promise<Pool> }).getNativeClient();
  let cache = caches.get(pool);
  if (!cache) caches.set(pool, (cache = new FragmentCache()));
  return cache;
}

/** A kind of kept item. */
export interface FragmentKind {
  /** Unique among kinds: part of the key. */
  name: string;
  /**
   * `select <id>::text as id, <version> as v, <json>::text as j from ... where <id> = any(?::uuid[])`:
   * the items' JSON and version (the same expression `SplicedPageQuery.version` reads).
   */
  build: () => string;
  /** Part of the key: whatever `build` depends on besides the rows (a configured media URL). */
  variant?: () => string;
}

export interface SplicedPageQuery extends JsonPageQuery {
  kind: FragmentKind;
  /**
   * The item's version given the expression of its id: a text of the row versions (`xmin`) of every
   * row its JSON is built from, so that any committed write to one of them changes it.
   */
  version: (idExpr: string) => string;
  /**
   * Set when `matched` is the kind's list without filters: the rows of exactly these organizations that
   * the counter triggers count (`list_counts`, Migration20261127021500). The total is then the sum of
   * the organizations' counter shards, read in the page's snapshot, instead of a count of every
   * matched row.
   */
  counted?: { kind: 'orders' | 'subscriptions' | 'customers'; organizationIds: readonly string[] };
}

/** The page's total: the kept count of an unfiltered list, else a count of the matched rows (CTE `m`). */
function totalSql(q: SplicedPageQuery, params: unknown[]): string {
  if (!q.counted) return 'select count(*) as t from m';
  params.push(q.counted.kind);
  return `select coalesce(sum(lc.n), 0)::bigint as t from list_counts lc
      where lc.kind = ? and ${sqlIn('lc.organization_id', q.counted.organizationIds, params)}`;
}

/**
 * One page, as `jsonPage` answers it, each item's JSON kept by (id, version). Inside a transaction, or
 * when an item changed between the page's statement and the one that built the missing ones, the full
 * statement answers.
 */
export async function splicedPage(em: SqlReader, q: SplicedPageQuery, page: Page): Promise<RawJson> {
  if (em.isInTransaction()) return jsonPage(em, q, page);
  const cache = await cacheOf(em);
  const bounds = pageBounds(page);
  const countParams: unknown[] = [];
  const sql = `with m as not materialized (${q.matched}),
    pg as (select * from m order by ${q.orderBy} ${bounds.sql}),
    c as (${totalSql(q, countParams)})
    select json_build_object('total_count', c.t, 'max_page', ceil(c.t / ?::numeric)::int)::text as pagination,
      m.id::text as id, ${q.version('m.id')} as v
    from c left join pg m on true
    order by ${q.orderBy}`;
  const rows = await query<{ pagination: string; id: string | null; v: string }>(em, sql, [...q.params, ...bounds.params, ...countParams, page.limit]);
  const items = rows[0]!.id === null ? [] : rows;
  const now = Date.now();
  const prefix = `${q.kind.name}:${q.kind.variant?.() ?? ''}:`;
  const texts: (Buffer | undefined)[] = items.map((r) => cache.get(`${prefix}${r.id}:${r.v}`, now));
  const missing = items.filter((_, n) => texts[n] === undefined);
  if (missing.length) {
    const built = await query<{ id: string; v: string; j: string }>(em, q.kind.build(), [missing.map((r) => r.id)]);
    const byId = new Map(built.map((b) => [b.id, b]));
    for (let n = 0; n < items.length; n++) {
      if (texts[n] !== undefined) continue;
      const r = items[n]!;
      const b = byId.get(r.id!);
      // Changed (or gone) since the page's statement: answer from one snapshot.
      if (!b || b.v !== r.v) return jsonPage(em, q, page);
      const text = Buffer.from(b.j, 'utf8');
      cache.set(`${prefix}${r.id}:${r.v}`, text, now);
      texts[n] = text;
    }
  }
  // The body as UTF-8 chunks: the kept items are written as they are, not joined or encoded again.
  const chunks: Buffer[] = [ITEMS_OPEN];
  for (let n = 0; n < texts.length; n++) {
    if (n) chunks.push(ITEM_SEPARATOR);
    chunks.push(texts[n]!);
  }
  chunks.push(Buffer.from(`], "pagination" : ${rows[0]!.pagination}}`, 'utf8'));
  return new RawJson(chunks);
}

export interface SplicedOneQuery extends JsonOneQuery {
  kind: FragmentKind;
  /** As `SplicedPageQuery.version`: the item's version given the expression of its id. */
  version: (idExpr: string) => string;
  /**
   * The same version over the alias of a `table` row (the statement's `x`), without looking the row
   * up again by id; the same text as `version` for that row. Without it, `version('x.id')`.
   */
  rowVersion?: (row: string) => string;
}

/**
 * One record, as `jsonOne` answers it (null: no row matches `where`, a 404), its JSON kept by (id,
 * version) as a list's items are: the statement answers the id and the version only, and the kept
 * UTF-8 text is written as it is. A version not kept is built by the kind's statement and kept if it
 * is the version read; inside a transaction, or if the record changed in between, `jsonOne` answers.
 */
export async function splicedOne(em: SqlReader, q: SplicedOneQuery): Promise<RawJson | null> {
  if (em.isInTransaction()) return jsonOne(em, q);
  const cache = await cacheOf(em);
  const rows = await query<{ id: string; v: string }>(
    em,
    `select x.id::text as id, ${q.rowVersion?.('x') ?? q.version('x.id')} as v from ${q.table} x where ${q.where} limit 1`,
    q.params,
  );
  if (!rows.length) return null;
  const { id, v } = rows[0]!;
  const now = Date.now();
  const key = `${q.kind.name}:${q.kind.variant?.() ?? ''}:${id}:${v}`;
  let text = cache.get(key, now);
  if (text === undefined) {
    const built = await query<{ id: string; v: string; j: string }>(em, q.kind.build(), [[id]]);
    const b = built[0];
    // Changed (or gone) since the first statement: answer from one snapshot.
    if (!b || b.v !== v) return jsonOne(em, q);
    text = Buffer.from(b.j, 'utf8');
    cache.set(key, text, now);
  }
  return new RawJson([text]);
}
