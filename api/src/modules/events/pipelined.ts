/**
 * Ingestion of a plain batch with its rows written while they are checked. One simple query, as on
 * the ordinary path (`events_check_customers` then `COPY … FROM STDIN`, one implicit transaction that
 * commits when the COPY ends), but it is sent before the first event is checked, and each slice of
 * events is checked and turned into COPY text while PostgreSQL writes the slices before it. The
 * answer still waits for the commit (acknowledged = durable: `synchronous_commit` is untouched).
 *
 * It takes only what the ordinary path (the route's body checks, then `ingestEvents`) would accept
 * unchanged and write the same way: every event accepted by `eventOk` (what the schema accepts as is),
 * no text PostgreSQL cannot store, no per-event issue (`checkEvent`), every customer_id a live
 * customer of its organization. On anything else, and on any error before the end of the data is
 * sent, the COPY is aborted (nothing of the batch is kept) and it answers null: the caller then runs
 * the ordinary path on the same body, which gives the answers and error shapes it always gave.
 * Its transaction is the simple query's, on a pooled connection of its own (as `writeEvents`').
 */
import type { EntityManager } from '../../kit/db.ts';
import { isUnstorable } from '../../kit/input-guards.ts';
import type { Principal } from '../../kit/principals.ts';
import type { ValidationIssue } from '../../kit/errors.ts';
import { scheduleMerge } from '../meters/rollups.ts';
import { CopyWriter, pooledClient, type PooledClient } from './copy.ts';
import { eventOk, isPlainObject } from './fast-validation.ts';
import type { EventCreate } from './schemas.ts';
import { checkEvent, customerCheckSql, EVENTS_COPY, eventCopyLine, ingestScope } from './service.ts';

/** COPY text sent per write: the first slice small (PostgreSQL starts at once), the next ones larger. */
const FIRST_SLICE_BYTES = 8 * 1024;
const SLICE_BYTES = 32 * 1024;

const yieldToIo = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Whether an accepted event holds text PostgreSQL cannot store (its other strings are checked ASCII). */
export function unstorable(e: EventCreate): boolean {
  if (isUnstorable(e.name)) return true;
  if (e.external_customer_id !== undefined && isUnstorable(e.external_customer_id)) return true;
  const m = e.metadata;
  if (m) {
    for (const key in m) {
      const v = m[key];
      if (isUnstorable(key) || (typeof v === 'string' && isUnstorable(v))) return true;
    }
  }
  return false;
}

/** Raised inside the pipeline when the batch is not one it takes: roll back, answer null. */
class NotPlain extends Error {}

/**
 * Ingests `body` (the parsed JSON, unchecked) when it is a plain batch; returns the number inserted,
 * or null when nothing was written and the ordinary path must answer.
 */
export async function ingestPlainBatch(em: EntityManager, principal: Principal, body: unknown): Promise<number | null> {
  if (!isPlainObject(body)) return null;
  for (const key in body) if (key !== 'events') return null;
  const events = body.events;
  if (!Array.isArray(events) || events.length < 1) return null;

  const now = new Date();
  let scope: Awaited<ReturnType<typeof ingestScope>>;
  let client: PooledClient;
  try {
    scope = await ingestScope(em, principal, now);
    client = await pooledClient(em);
  } catch {
    return null; // the ordinary path answers (a refused body before a database error, as it always did)
  }
  // The customer check runs first in the same simple query, as on the ordinary path: the pairs are
  // read before the events are checked (an event that fails its checks sends the batch back anyway).
  const pairs = new Map<string, [string, string]>();
  for (const e of events as Partial<Record<string, unknown>>[]) {
    const org = scope.tokenOrganization ?? e?.organization_id;
    const customer = e?.customer_id;
    if (typeof org === 'string' && typeof customer === 'string') pairs.set(`${org}:${customer}`, [org, customer]);
  }
  // One implicit transaction: the check, then the COPY; it commits when the COPY ends.
  const copy = new CopyWriter(`${customerCheckSql(pairs.values())} ${EVENTS_COPY}`);
  client.query(copy);
  let ended = false;
  try {
    const created = now.toISOString();
    const issues: ValidationIssue[] = [];
    const orgs = new Set<string>();
    let text = '';
    let limit = FIRST_SLICE_BYTES;
    for (let i = 0; i < events.length; i++) {
      const e = events[i] as EventCreate;
      if (!eventOk(e) || unstorable(e)) throw new NotPlain();
      const org = checkEvent(e, i, scope, issues);
      if (issues.length) throw new NotPlain();
      orgs.add(org);
      text += eventCopyLine(created, e.timestamp ?? created, e.name, 'user', org, e.customer_id ?? null, e.external_customer_id ?? null, e.metadata);
      if (text.length >= limit) {
        copy.write(text);
        text = '';
        limit = SLICE_BYTES;
        // Let PostgreSQL's answers in (its request for data first) while it writes this slice.
        await yieldToIo();
      }
    }
    if (text) copy.write(text);
    ended = true;
    const inserted = await copy.end();
    client.release();
    scheduleMerge(em, [...orgs]);
    return inserted;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    if (ended && typeof code !== 'string') {
      // The end of the data went out and no answer of PostgreSQL came back: the batch may have been
      // committed, so it is never written again (a database error, as on the ordinary path).
      client.release(err as Error);
      throw err;
    }
    // Nothing was committed: a refused check or COPY (PostgreSQL's error), or not a plain batch.
    await copy.fail('batch not taken');
    if (typeof code !== 'string' && !(err instanceof NotPlain)) client.release(err as Error);
    else client.release();
    return null;
  }
}
