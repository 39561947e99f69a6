/**
 * Where an ingest request's wall time goes, seen from outside the API: the client's clock around each
 * HTTP request, and the PostgreSQL protocol messages of the request's COPY exchange as they pass the
 * bench's proxy (`CountingProxy.tap`). Per request:
 *   request sent → COPY statement sent by the API (HTTP, body read, JSON parse, checks, COPY text,
 *     pool checkout; everything the API does before PostgreSQL hears of the batch)
 *   → PostgreSQL ready for the rows (CopyInResponse: the customer check statement ran)
 *   → last row sent by the API (CopyDone)
 *   → PostgreSQL done (ReadyForQuery: rows written, indexes, commit and its WAL flush; for a body
 *     read as it arrives, `begin; COPY` then the customer check and commit as a second query: done is
 *     that query's ReadyForQuery, and "customer check" is only the BEGIN)
 *   → answer received by the client (the API's answer and the client's HTTP).
 * A stage overlaps the next one when the API streams (rows sent while PostgreSQL already writes).
 */

type Side = 'client' | 'server';

/** Splits one direction of a PostgreSQL connection into messages (type byte, first bytes of the payload). */
class MessageSplitter {
  private buf: Buffer = Buffer.alloc(0);
  private started: boolean;

  constructor(
    side: Side,
    private readonly onMessage: (type: string, head: Buffer) => void,
  ) {
    this.started = side === 'server';
  }

  feed(chunk: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    for (;;) {
      if (!this.started) {
        if (this.buf.length < 8) return;
        const len = this.buf.readInt32BE(0);
        if (this.buf.length < len) return;
        if (this.buf.readInt32BE(4) === 196608) this.started = true;
        this.buf = this.buf.subarray(len);
        continue;
      }
      if (this.buf.length < 5) return;
      const len = this.buf.readInt32BE(1);
      if (this.buf.length < len + 1) return;
      this.onMessage(String.fromCharCode(this.buf[0]!), this.buf.subarray(5, Math.min(len + 1, 64)));
      this.buf = this.buf.subarray(len + 1);
    }
  }
}

interface Exchange {
  query: number;
  ready?: number;
  lastRow?: number;
  done?: number;
  /** The body read as it arrives: `begin; COPY`, then a second query (customer check and commit) ends it. */
  streamed?: 'copy' | 'copied' | 'committing';
}

/** The ingest's one simple query: the customer check and the COPY, or the COPY alone. */
const INGEST_QUERY = /^\s*(select "events_check_customers"|copy "events")/;
/** The streamed ingest's first query (its customer check and commit follow the rows). */
const STREAMED_QUERY = /^\s*begin; copy "events"/;

const STAGES = ['API before PostgreSQL', 'customer check', 'rows sent after that', 'PostgreSQL after last row', 'answer to client'] as const;

export class IngestTimeline {
  private readonly exchanges: Exchange[] = [];
  private readonly open = new Map<number, Exchange>();
  private readonly requests: { start: number; end: number }[] = [];
  enabled = false;

  /** For `CountingProxy.tap`: one splitter pair per proxied connection. */
  tapFor(connection: number): (side: Side, chunk: Buffer) => void {
    const at = () => performance.now();
    const client = new MessageSplitter('client', (type, head) => {
      if (!this.enabled) return;
      if (type === 'Q') {
        const open = this.open.get(connection);
        if (open?.streamed === 'copied') open.streamed = 'committing';
        else if (INGEST_QUERY.test(head.toString('utf8'))) this.open.set(connection, { query: at() });
        else if (STREAMED_QUERY.test(head.toString('utf8'))) this.open.set(connection, { query: at(), streamed: 'copy' });
      }
      else if (type === 'c' || type === 'f') {
        const e = this.open.get(connection);
        if (e) e.lastRow = at();
      }
    });
    const server = new MessageSplitter('server', (type) => {
      const e = this.open.get(connection);
      if (!e) return;
      if (type === 'G') e.ready = at();
      else if (type === 'Z') {
        if (e.streamed === 'copy') {
          e.streamed = 'copied';
          return;
        }
        e.done = at();
        this.open.delete(connection);
        if (e.ready && e.lastRow) this.exchanges.push(e);
      }
    });
    return (side, chunk) => (side === 'client' ? client : server).feed(chunk);
  }

  request(start: number, end: number): void {
    if (this.enabled) this.requests.push({ start, end });
  }

  reset(): void {
    this.exchanges.length = 0;
    this.requests.length = 0;
    this.open.clear();
  }

  /**
   * Median of each stage over the requests (run at one in flight: each request is matched with the
   * COPY exchange that began inside it), with their sum and the median request for comparison.
   */
  summary(): string | null {
    const stages: number[][] = STAGES.map(() => []);
    const totals: number[] = [];
    let i = 0;
    for (const r of this.requests) {
      while (i < this.exchanges.length && this.exchanges[i]!.query < r.start) i++;
      const e = this.exchanges[i];
      if (!e || e.query > r.end || !e.ready || !e.lastRow || !e.done) continue;
      const parts = [e.query - r.start, e.ready - e.query, Math.max(0, e.lastRow - e.ready), e.done - Math.max(e.lastRow, e.ready), r.end - e.done];
      parts.forEach((p, k) => stages[k]!.push(p));
      totals.push(r.end - r.start);
    }
    if (!totals.length) return null;
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    const parts = STAGES.map((name, k) => `${name} ${median(stages[k]!).toFixed(1)}`);
    return `wall per request (medians, ms, ${totals.length} requests): ${parts.join(' + ')}; request ${median(totals).toFixed(1)}`;
  }
}
