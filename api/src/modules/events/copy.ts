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

class CopyIn {
  private error: Error | null = null;
  private done!: (err: Error | null) => void;
  readonly finished = new Promise<void>((resolve, reject) => {
    this.done = (err) => (err ? reject(err) : resolve());
  });
  rowCount = 0;

  constructor(
    private readonly text: string,
    private readonly data: Buffer,
  ) {}

  submit(connection: PgConnection) {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: PgConnection) {
    try {
      connection.sendCopyFromChunk(this.data);
      connection.endCopyFrom();
    } catch (err) {
      connection.sendCopyFail((err as Error).message);
    }
  }

  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}

  handleCommandComplete(msg: { text: string }) {
    if (msg.text.startsWith('COPY')) this.rowCount = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0);
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
  const pool = (await em.getConnection().getNativeClient()) as unknown as {
    connect(): Promise<{ query(q: CopyIn): unknown; release(err?: Error | boolean): void }>;
  };
  const client = await pool.connect();
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
