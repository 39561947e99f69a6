/**
 * `COPY … FROM STDIN` on a pooled `pg` connection, through pg's Submittable interface (what
 * pg-copy-streams does), preceded in the same simple-query message by other statements: PostgreSQL
 * runs a multi-statement simple query as one implicit transaction, so the statements before the COPY
 * and the COPY commit together or not at all. Values cannot be bound in a simple query: callers
 * quote them with `literal`.
 */
import type { EntityManager } from '../../kit/db.ts';

interface PgConnection {
  query(text: string): void;
  sendCopyFromChunk(chunk: Buffer): void;
  endCopyFrom(): void;
  sendCopyFail(message: string): void;
}

/**
 * What pg's Submittable interface asks of a query that sends `text` as one simple query: the
 * messages a COPY does not use are ignored, the COPY's row count is kept, and `done` settles the
 * subclass's promise.
 */
abstract class CopySubmittable {
  protected error: Error | null = null;
  protected done!: (err: Error | null) => void;
  readonly finished = new Promise<void>((resolve, reject) => {
    this.done = (err) => (err ? reject(err) : resolve());
  });
  rowCount = 0;

  constructor(private readonly text: string) {}

  submit(connection: PgConnection) {
    connection.query(this.text);
  }

  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}

  handleCommandComplete(msg: { text: string }) {
    if (msg.text.startsWith('COPY')) this.rowCount = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0);
  }
}

class CopyIn extends CopySubmittable {
  constructor(
    text: string,
    private readonly data: Buffer,
  ) {
    super(text);
  }

  handleCopyInResponse(connection: PgConnection) {
    try {
      connection.sendCopyFromChunk(this.data);
      connection.endCopyFrom();
    } catch (err) {
      connection.sendCopyFail((err as Error).message);
    }
  }

  /** pg detaches the query on an error (no ReadyForQuery reaches it): settle now; the client queues what follows. */
  handleError(err: Error) {
    this.error ??= err;
    this.done(this.error);
  }

  handleReadyForQuery() {
    this.done(this.error);
  }
}

/**
 * A `COPY … FROM STDIN` (after other statements of the same simple query, e.g. `begin;`) whose rows
 * are written while they are produced: chunks written before PostgreSQL asks for data wait here.
 * `end()` resolves with the rows copied once PostgreSQL is ready again; any error (PostgreSQL's, or
 * `fail()`) rejects it.
 */
export class CopyWriter extends CopySubmittable {
  private connection: PgConnection | null = null;
  private pending: Buffer[] = [];
  private ending: 'end' | 'fail' | null = null;
  private failure = '';
  private settled = false;

  constructor(text: string) {
    super(text);
    // Observed by end(); a failure nobody awaits (the caller gave up) must not be an unhandled rejection.
    this.finished.catch(() => undefined); // ignore: end() reports the same error to its caller
  }

  /** Queues COPY text (whole rows); sent at once when PostgreSQL already waits for data. */
  write(chunk: string): void {
    if (this.settled || this.ending) return;
    const data = Buffer.from(chunk);
    if (this.connection) this.connection.sendCopyFromChunk(data);
    else this.pending.push(data);
  }

  /** Ends the data; resolves with the rows copied (the statement's transaction stays as the text left it). */
  async end(): Promise<number> {
    this.finish('end');
    await this.finished;
    return this.rowCount;
  }

  /** Aborts the COPY (PostgreSQL raises an error: nothing of it is kept); resolves once it has. */
  async fail(reason: string): Promise<void> {
    this.failure = reason;
    this.finish('fail');
    await this.finished.catch(() => undefined); // ignore: the error is the one asked for
  }

  private finish(how: 'end' | 'fail') {
    if (this.settled || this.ending) return;
    this.ending = how;
    if (this.connection) this.sendEnd(this.connection);
  }

  private sendEnd(connection: PgConnection) {
    if (this.ending === 'end') connection.endCopyFrom();
    else connection.sendCopyFail(this.failure);
  }

  handleCopyInResponse(connection: PgConnection) {
    this.connection = connection;
    for (const data of this.pending) connection.sendCopyFromChunk(data);
    this.pending = [];
    if (this.ending) this.sendEnd(connection);
  }

  /** pg detaches the query on an error (no ReadyForQuery reaches it): settle now. */
  handleError(err: Error) {
    this.error ??= err;
    this.settle();
  }

  handleReadyForQuery() {
    this.settle();
  }

  private settle() {
    if (this.settled) return;
    this.settled = true;
    this.connection = null;
    this.pending = [];
    this.done(this.error);
  }
}

/** A pooled connection of the EntityManager's pool, outside its transactions. */
export interface PooledClient {
  query(q: CopyIn | CopyWriter): unknown;
  query(text: string): Promise<unknown>;
  release(err?: Error | boolean): void;
}

export async function pooledClient(em: EntityManager): Promise<PooledClient> {
  const pool = (await em.getConnection().getNativeClient()) as unknown as { connect(): Promise<PooledClient> };
  return pool.connect();
}

const COPY_SPECIAL = /[\\\t\n\r]/;
const COPY_SPECIALS = /[\\\t\n\r]/g;
const COPY_ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** COPY text format field: tab-separated, `\N` for NULL, backslash escapes (one pass, none when nothing needs it). */
export const copyField = (v: string | null): string =>
  v === null ? '\\N' : COPY_SPECIAL.test(v) ? v.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c]!) : v;

/** A SQL string literal (standard_conforming_strings on: only quotes are doubled; no NUL allowed). */
export const literal = (v: string): string => `'${v.replace(/'/g, "''")}'`;

/**
 * Runs `before` (statements ending with `;`) and then `copy` (a `COPY … FROM STDIN` statement)
 * fed with `data`, in one implicit transaction on a connection of its own; returns the rows copied.
 */
export async function copyIn(em: EntityManager, before: string, copy: string, data: string): Promise<number> {
  const client = await pooledClient(em);
  const run = new CopyIn(`${before} ${copy}`, Buffer.from(data));
  try {
    client.query(run);
    await run.finished;
    client.release();
    return run.rowCount;
  } catch (err) {
    // A PostgreSQL error leaves the connection usable; anything else (a broken socket) discards it.
    client.release(typeof (err as { code?: unknown }).code === 'string' ? undefined : (err as Error));
    throw err;
  }
}
