/**
 * The smallest HTTP server that does what any event ingest endpoint must do, run by bench/ingest.ts as
 * a child process (a reference, not the product): `node:http`, the whole body read, `JSON.parse`, a
 * minimal shape check per event (an object with a name, an ISO timestamp, a customer id and an object
 * of metadata), the rows COPYed in one transaction (one `COPY … FROM STDIN` simple query: it commits
 * when the COPY ends, `synchronous_commit` as the server has it, so acknowledged = durable), then
 * `200 {"inserted": n}`. No authentication, customer check, rollups, logging or metrics: what the API
 * does beyond this is what the ratio API / bare measures. Ids are the API's (`events/ids.ts`), so the
 * rows are the same rows.
 *
 *   DATABASE_URL=… PORT=… ORGANIZATION_ID=… node --import tsx bench/ingest-bare.ts
 *
 * `BARE_MODE` picks the variant (the same rules: acknowledged = durable, one transaction per batch):
 *   whole  (default) the body read whole, then parsed, then COPYed;
 *   stream the best a server can overlap at one request in flight: the connection is checked out and
 *          the COPY started when the request's headers arrive, each event is parsed
 *          (`EventsArrayScanner`, the API's byte scanner, then JSON.parse) and its row written as soon
 *          as its bytes are in, so PostgreSQL writes rows while the body still arrives and is parsed;
 *          the COPY ends (and commits) at the body's last byte;
 *   null   no PostgreSQL at all: the body read whole and `200 {"inserted": n}` with n counted by the
 *          scanner; the HTTP part alone (client and server), which a batch's PostgreSQL work can at
 *          best hide.
 *
 * Prints `listening` once it accepts requests.
 */
import http from 'node:http';
import pg from 'pg';
import { timeOrderedId } from '../api/src/modules/events/ids.ts';
import { EventsArrayScanner } from '../api/src/modules/events/stream-scan.ts';

const COPY_SQL =
  'copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin';
const org = process.env.ORGANIZATION_ID!;
const MODE = process.env.BARE_MODE ?? 'whole';
if (!['whole', 'stream', 'null'].includes(MODE)) throw new Error(`BARE_MODE: whole, stream or null, not ${MODE}`);
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });

/** COPY text format field: `\N` for NULL, backslash escapes. */
const field = (v: string | null) => (v === null ? '\\N' : /[\\\t\n\r]/.test(v) ? v.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' })[c]!) : v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** COPY … FROM STDIN of one buffer through pg's Submittable interface. */
class Copy {
  private error: Error | null = null;
  private done!: (err: Error | null) => void;
  readonly finished = new Promise<void>((resolve, reject) => {
    this.done = (err) => (err ? reject(err) : resolve());
  });
  rowCount = 0;
  constructor(private readonly data: Buffer) {}
  submit(connection: { query(text: string): void }) {
    connection.query(COPY_SQL);
  }
  handleCopyInResponse(connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void }) {
    connection.sendCopyFromChunk(this.data);
    connection.endCopyFrom();
  }
  handleCommandComplete(msg: { text: string }) {
    this.rowCount = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0);
  }
  handleError(err: Error) {
    this.error ??= err;
    this.done(this.error);
  }
  handleReadyForQuery() {
    this.done(this.error);
  }
}

/** COPY … FROM STDIN whose rows are written as they are produced (the `stream` mode). */
class StreamingCopy extends Copy {
  private connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void; sendCopyFail(m: string): void } | null = null;
  private pending: Buffer[] = [];
  private ended = false;
  private failed: string | null = null;
  constructor() {
    super(Buffer.alloc(0));
  }
  override handleCopyInResponse(connection: { sendCopyFromChunk(b: Buffer): void; endCopyFrom(): void; sendCopyFail(m: string): void }) {
    this.connection = connection;
    for (const b of this.pending) connection.sendCopyFromChunk(b);
    this.pending = [];
    if (this.failed !== null) connection.sendCopyFail(this.failed);
    else if (this.ended) connection.endCopyFrom();
  }
  write(text: string) {
    const b = Buffer.from(text);
    if (this.connection) this.connection.sendCopyFromChunk(b);
    else this.pending.push(b);
  }
  end() {
    this.ended = true;
    this.connection?.endCopyFrom();
  }
  fail(message: string) {
    this.failed = message;
    this.connection?.sendCopyFail(message);
  }
}

/** One event's shape check and its COPY line (null when it is not an event). */
function line(e: unknown, created: string): string | null {
  if (
    !isObject(e) ||
    typeof e.name !== 'string' ||
    (e.timestamp !== undefined && !(typeof e.timestamp === 'string' && !Number.isNaN(Date.parse(e.timestamp)))) ||
    typeof e.customer_id !== 'string' ||
    (e.metadata !== undefined && !isObject(e.metadata))
  )
    return null;
  return `${timeOrderedId()}\t${created}\t${field((e.timestamp as string | undefined) ?? created)}\t${field(e.name)}\tuser\t${org}\t${field(e.customer_id)}\t\\N\t${field(JSON.stringify(e.metadata ?? {}))}\n`;
}

/** The `stream` mode: COPY started at the headers, rows written as their bytes arrive, commit at the last byte. */
function streamed(req: http.IncomingMessage, res: http.ServerResponse) {
  const created = new Date().toISOString();
  const scanner = new EventsArrayScanner();
  const copy = new StreamingCopy();
  let bad: string | null = null;
  let n = 0;
  const clientReady = pool.connect().then((client) => {
    client.query(copy as never);
    return client;
  });
  req.on('data', (chunk: Buffer) => {
    if (bad) return;
    let text = '';
    const ok = scanner.push(chunk, (bytes) => {
      if (bad) return;
      let e: unknown;
      try {
        e = JSON.parse(bytes.toString());
      } catch {
        bad = `events[${n}]: invalid JSON`;
        return;
      }
      const l = line(e, created);
      if (l === null) bad = `events[${n}]: not an event`;
      else text += l;
      n++;
    });
    if (!ok) bad ??= 'not an events body';
    if (bad) copy.fail(bad);
    else if (text) copy.write(text);
  });
  req.on('end', () => {
    if (!bad && !scanner.complete) bad = 'truncated body';
    if (bad) copy.fail(bad);
    else copy.end();
    void clientReady.then(async (client) => {
      try {
        await copy.finished;
        client.release();
        answer(res, 200, { inserted: copy.rowCount });
      } catch (err) {
        client.release(typeof (err as { code?: unknown }).code === 'string' ? undefined : (err as Error));
        answer(res, 422, { error: bad ?? (err as Error).message });
      }
    });
  });
}

const answer = (res: http.ServerResponse, status: number, body: unknown) => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
};

async function ingest(raw: Buffer): Promise<[number, unknown]> {
  let body: unknown;
  try {
    body = JSON.parse(raw.toString());
  } catch {
    return [400, { error: 'invalid JSON' }];
  }
  const events = isObject(body) ? body.events : undefined;
  if (!Array.isArray(events) || !events.length) return [422, { error: 'events: a non-empty array' }];
  const created = new Date().toISOString();
  let text = '';
  for (let i = 0; i < events.length; i++) {
    const l = line(events[i], created);
    if (l === null) return [422, { error: `events[${i}]: not an event` }];
    text += l;
  }
  const client = await pool.connect();
  try {
    const copy = new Copy(Buffer.from(text));
    client.query(copy as never);
    await copy.finished;
    client.release();
    return [200, { inserted: copy.rowCount }];
  } catch (err) {
    client.release(typeof (err as { code?: unknown }).code === 'string' ? undefined : (err as Error));
    return [422, { error: (err as Error).message }];
  }
}

const server = http.createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== '/v1/events/ingest') return answer(res, 404, { error: 'not found' });
  if (MODE === 'stream') return streamed(req, res);
  if (MODE === 'null') {
    const scanner = new EventsArrayScanner();
    let n = 0;
    req.on('data', (c: Buffer) => scanner.push(c, () => n++));
    req.on('end', () => answer(res, 200, { inserted: n }));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    ingest(Buffer.concat(chunks)).then(
      ([status, body]) => answer(res, status, body),
      (err: Error) => answer(res, 500, { error: err.message }),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => {
  server.close();
  void pool.end().then(() => process.exit(0));
});
