/**
 * POST /v1/events/ingest with its rows written while the body arrives. In place of the JSON body
 * parser for that route: the request is authenticated from its headers, a `begin; COPY … FROM STDIN`
 * goes out on a pooled connection, and each element of `events` is parsed (`EventsArrayScanner`,
 * then JSON.parse), checked with the ordinary path's functions (`eventOk`, unstorable text,
 * `checkEvent`) and written as COPY text as soon as its bytes are in, so PostgreSQL writes rows while
 * the client is still sending. The route's handler then ends the COPY, runs the customer check and
 * commits (`commitStreamedIngest`); the answer waits for the commit (acknowledged = durable).
 *
 * Nothing here decides an answer of its own. Whatever it does not take (another body shape, a bad
 * event, invalid UTF-8, a header it does not expect, a credential that may not ingest, a refused
 * customer check) aborts the COPY and rolls back, so nothing of the batch is kept, and the same bytes
 * go through the ordinary body parser and route checks, which give the answers and error shapes they
 * always gave. The body is kept (at most the parser's limit) for that; a body over the limit is
 * refused by the parser as before, and the server's request timeout still ends a slow sender.
 */
import { Readable } from 'node:stream';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { authenticate, authorize } from '../../kit/principals.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import type { ValidationIssue } from '../../kit/errors.ts';
import { scheduleMerge } from '../meters/rollups.ts';
import { CopyWriter, pooledClient, type PooledClient } from './copy.ts';
import { eventOk } from './fast-validation.ts';
import { unstorable } from './pipelined.ts';
import type { EventCreate } from './schemas.ts';
import { checkEvent, customerCheckSql, EVENTS_COPY, eventCopyLine, ingestScope, type IngestScope } from './service.ts';
import { EventsArrayScanner } from './stream-scan.ts';

export const INGEST_PATH = '/v1/events/ingest';
const WRITER = sellerAuth('events:write');
/** COPY text held back until it is this long (or the chunk that carried it is done). */
const SLICE_BYTES = 32 * 1024;
/**
 * How long a streamed batch may hold its connection before the whole body is in: a slower sender's
 * COPY is rolled back and its body read by the parser (the ordinary path), so slow clients cannot
 * hold pooled connections.
 */
const HOLD_MS = 5_000;

const streams = new WeakMap<Request, StreamedIngest>();

/** Whether the request may be read as it arrives: anything else goes to the body parser at once. */
function streamable(req: Request, limit: number): boolean {
  if (req.method !== 'POST' || req.path !== INGEST_PATH) return false;
  const h = req.headers;
  if (!h.authorization || !/^bearer\s+\S+/i.test(h.authorization) || h['idempotency-key'] !== undefined) return false;
  if ((h['content-encoding'] ?? 'identity').toLowerCase() !== 'identity') return false;
  if (!/^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i.test(h['content-type'] ?? '')) return false;
  const length = h['content-length'];
  if (length !== undefined && !(/^\d+$/.test(length) && Number(length) <= limit)) return false;
  return h['content-length'] !== undefined || h['transfer-encoding'] !== undefined;
}

/**
 * The body handler for every request: the ingest route's requests read as they arrive when they can
 * be, every other request (and any body the stream does not take) through `parser`.
 */
export function ingestBodyReader(parser: RequestHandler, limit: number, slots: number): RequestHandler {
  // At most `slots` batches stream at once (each holds a pooled connection while its body arrives); the others are parsed whole.
  let active = 0;
  return (req, res, next) => {
    if (active >= slots || !streamable(req, limit)) {
      parser(req, res, next);
      return;
    }
    active++;
    let freed = false;
    const free = () => {
      if (!freed) active--;
      freed = true;
    };
    new StreamedIngest(req, res, next, parser, limit, free).start();
  };
}

/** The route's side: commits a streamed batch; null when there is none or it was not taken (then `req.body` holds the parsed body). */
export async function commitStreamedIngest(req: Request): Promise<number | null> {
  const s = streams.get(req);
  if (!s) return null;
  streams.delete(req);
  return s.commit();
}

const abortedError = () => Object.assign(new Error('request aborted'), { status: 400, expose: true, type: 'request.aborted' });

class StreamedIngest {
  private readonly scanner = new EventsArrayScanner();
  private chunks: Buffer[] = [];
  private received = 0;
  /** Accepted events not yet written. */
  private queue: EventCreate[] = [];
  private index = 0;
  private state: 'stream' | 'ready' | 'parser' | 'aborted' | 'done' = 'stream';
  private ended = false;
  private nextCalled = false;
  private client: PooledClient | null = null;
  private copy: CopyWriter | null = null;
  private scope: IngestScope | null = null;
  private created = '';
  private readonly orgs = new Set<string>();
  private readonly pairs = new Map<string, [string, string]>();
  private readonly issues: ValidationIssue[] = [];
  private replay: Readable | null = null;
  private setup: Promise<void> = Promise.resolve();

  constructor(
    private readonly req: Request,
    private readonly res: Response,
    private readonly next: NextFunction,
    private readonly parser: RequestHandler,
    private readonly limit: number,
    /** Called once the batch holds no connection any more. */
    private readonly free: () => void,
  ) {}
  private holdTimer: NodeJS.Timeout | null = null;

  start() {
    const { req } = this;
    req.on('data', (chunk: Buffer) => this.data(chunk));
    req.on('end', () => this.end());
    req.on('close', () => {
      if (!req.complete) this.aborted();
    });
    // An answer that goes out without the route committing (a refused token, a rate limit) rolls back.
    this.res.on('close', () => {
      if (this.state === 'ready' && streams.get(req) === this) {
        streams.delete(req);
        void this.rollback();
      }
    });
    this.setup = this.prepare().catch(() => this.toParser()); // ignore: the parser and the route answer this request
  }

  private async prepare() {
    const { req, res } = this;
    const principal = await new Promise<Request['principal'] | null>((resolve) => {
      authenticate()(req, res, (err?: unknown) => resolve(err ? null : req.principal));
    });
    if (!principal || this.state !== 'stream') return this.toParser();
    authorize(principal, WRITER);
    const now = new Date();
    this.created = now.toISOString();
    this.scope = await ingestScope(req.em, principal, now);
    if (this.state !== 'stream') return;
    this.client = await pooledClient(req.em);
    // An explicit transaction: the customers are known only at the end, so their check runs after the rows.
    this.copy = new CopyWriter(`begin; ${EVENTS_COPY}`);
    this.client.query(this.copy);
    if (this.state !== 'stream') return this.abortCopy();
    this.holdTimer = setTimeout(() => {
      if (this.state === 'stream') this.toParser();
    }, HOLD_MS);
    this.flush();
  }

  private data(chunk: Buffer) {
    if (this.replay) {
      this.replay.push(chunk);
      return;
    }
    if (this.state !== 'stream') return;
    this.chunks.push(chunk);
    this.received += chunk.length;
    // Over the limit: the parser refuses it (413) as it always did.
    if (this.received > this.limit) return this.toParser();
    if (!this.scanner.push(chunk, (bytes) => this.element(bytes))) return this.toParser();
    this.flush();
  }

  private element(bytes: Buffer) {
    if (this.state !== 'stream') return;
    const text = bytes.toString();
    // Invalid UTF-8 (decoded as U+FFFD) is left to the parser's own decoder.
    let e: unknown;
    try {
      e = text.includes('\uFFFD') ? undefined : JSON.parse(text);
    } catch {
      e = undefined;
    }
    if (!eventOk(e) || unstorable(e as EventCreate)) return this.toParser();
    this.queue.push(e as EventCreate);
  }

  /** Checks the accepted events and writes their rows, once the COPY is under way. */
  private flush() {
    const { scope, copy } = this;
    if (!scope || !copy || this.state !== 'stream') return;
    let text = '';
    for (const e of this.queue) {
      const org = checkEvent(e, this.index++, scope, this.issues);
      if (this.issues.length) return this.toParser();
      this.orgs.add(org);
      if (e.customer_id) this.pairs.set(`${org}:${e.customer_id}`, [org, e.customer_id]);
      text += eventCopyLine(this.created, e.timestamp ?? this.created, e.name, 'user', org, e.customer_id ?? null, e.external_customer_id ?? null, e.metadata);
      if (text.length >= SLICE_BYTES) {
        copy.write(text);
        text = '';
      }
    }
    this.queue = [];
    if (text) copy.write(text);
  }

  private end() {
    this.ended = true;
    if (this.replay) {
      this.replay.push(null);
      return;
    }
    if (this.state !== 'stream') return;
    if (!this.scanner.complete) return this.toParser();
    void this.setup.then(() => {
      if (this.state !== 'stream') return;
      this.flush();
      if (this.state !== 'stream') return;
      if (!this.copy) return this.toParser();
      this.state = 'ready';
      this.stopTimer();
      streams.set(this.req, this);
      this.callNext();
    });
  }

  private aborted() {
    if (this.replay) {
      // What the parser sees of a client gone mid-body (it answers nobody).
      this.replay.emit('aborted');
      this.replay.push(null);
      return;
    }
    if (this.state !== 'stream') return;
    this.state = 'aborted';
    void this.abortCopy().then(() => this.callNext(abortedError()));
  }

  private callNext(err?: unknown) {
    if (this.nextCalled) return;
    this.nextCalled = true;
    this.next(err);
  }

  /** Leaves the request to the body parser, on the bytes read so far and the rest as it comes. */
  private toParser() {
    if (this.state !== 'stream') return;
    this.state = 'parser';
    const rolledBack = this.abortCopy();
    // A readable of the same bytes and headers (not a duplex: the parser would take a written-to stream for a finished one).
    const replay = Object.assign(new Readable({ read() {} }), { headers: this.req.headers, method: this.req.method, url: this.req.url });
    this.replay = replay;
    for (const c of this.chunks) replay.push(c);
    this.chunks = [];
    if (this.ended) replay.push(null);
    this.parser(replay as unknown as Request, this.res, (err?: unknown) => {
      const parsed = replay as unknown as { body?: unknown; rawBody?: Buffer };
      this.req.body = parsed.body;
      (this.req as unknown as { rawBody?: Buffer }).rawBody = parsed.rawBody;
      void rolledBack.then(() => this.callNext(err));
    });
  }

  /** Aborts the COPY and rolls its transaction back (nothing of the batch is kept); the connection goes back to the pool. */
  private async abortCopy() {
    const { client, copy } = this;
    this.client = null;
    this.copy = null;
    this.stopTimer();
    if (!client || !copy) return this.free();
    await copy.fail('batch not taken');
    try {
      await client.query('rollback');
      client.release();
    } catch (err) {
      client.release(err as Error);
    }
    this.free();
  }

  private stopTimer() {
    if (this.holdTimer) clearTimeout(this.holdTimer);
    this.holdTimer = null;
  }

  private async rollback() {
    this.state = 'done';
    await this.abortCopy();
  }

  /** Ends the COPY, checks the customers and commits; null (and `req.body` parsed) when not taken. */
  async commit(): Promise<number | null> {
    const { client, copy } = this;
    this.state = 'done';
    if (!client || !copy) {
      this.free();
      return this.parsedBody();
    }
    let committing = false;
    try {
      const inserted = await copy.end();
      committing = true;
      await client.query(`${customerCheckSql(this.pairs.values())} commit`);
      this.client = null;
      this.copy = null;
      client.release();
      this.free();
      scheduleMerge(this.req.em, [...this.orgs]);
      return inserted;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (committing && typeof code !== 'string') {
        // The commit went out and no answer of PostgreSQL came back: the batch may have been
        // committed, so it is never written again (a database error, as on the ordinary path).
        this.client = null;
        client.release(err as Error);
        this.free();
        throw err;
      }
      // Not committed: a refused check or COPY (the ordinary path gives its answer), or a broken connection.
      await this.abortCopy();
      return this.parsedBody();
    }
  }

  /** The body as the parser would have given it: the scanner saw one object of whole JSON elements. */
  private parsedBody(): null {
    const raw = Buffer.concat(this.chunks);
    this.chunks = [];
    this.req.body = JSON.parse(raw.toString());
    (this.req as unknown as { rawBody?: Buffer }).rawBody = raw;
    return null;
  }
}
