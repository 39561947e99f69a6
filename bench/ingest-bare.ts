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
 * Prints `listening` once it accepts requests.
 */
import http from 'node:http';
import pg from 'pg';
import { timeOrderedId } from '../api/src/modules/events/ids.ts';

const COPY_SQL =
  'copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin';
const org = process.env.ORGANIZATION_ID!;
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
    const e = events[i];
    if (
      !isObject(e) ||
      typeof e.name !== 'string' ||
      (e.timestamp !== undefined && !(typeof e.timestamp === 'string' && !Number.isNaN(Date.parse(e.timestamp)))) ||
      typeof e.customer_id !== 'string' ||
      (e.metadata !== undefined && !isObject(e.metadata))
    )
      return [422, { error: `events[${i}]: not an event` }];
    text += `${timeOrderedId()}\t${created}\t${field((e.timestamp as string | undefined) ?? created)}\t${field(e.name)}\tuser\t${org}\t${field(e.customer_id)}\t\\N\t${field(JSON.stringify(e.metadata ?? {}))}\n`;
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
