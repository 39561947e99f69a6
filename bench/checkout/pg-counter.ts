/**
 * A counting TCP proxy in front of PostgreSQL, for the benchmarks: the process under test connects to
 * the proxy's port instead of PostgreSQL's, and every statement it sends is counted (the embedded
 * PostgreSQL has no pg_stat_statements preloaded, and restarting the shared server is not an option).
 *
 * It reads the frontend half of the wire protocol only: a simple query ('Q') counts once per query
 * string, an extended-protocol Execute ('E') counts once, attributed to the text of the statement its
 * portal was bound from (Parse 'P' / Bind 'B'). Texts are normalised (literals and IN lists folded) so
 * the same statement with other values counts under one key. Bytes are forwarded unchanged.
 */
import net from 'node:net';

export interface StatementCounts {
  total: number;
  /** begin / commit / rollback / savepoint / release. */
  transaction: number;
  byText: Map<string, number>;
}

const STARTUP_CODES = new Set([80877103 /* SSLRequest */, 80877104 /* GSSENCRequest */, 80877102 /* CancelRequest */]);

/** A statement's text with its values folded, one line. */
export function normalise(sql: string): string {
  return sql
    .replace(/\s+/g, ' ')
    .replace(/'(?:[^']|'')*'/g, '?')
    .replace(/\$\d+/g, '?')
    .replace(/\b\d+\b/g, '?')
    .replace(/\((?:\s*\?\s*,)+\s*\?\s*\)/g, '(?…)')
    .replace(/(\(\?…\)\s*,\s*)+\(\?…\)/g, '(?…)…')
    .trim();
}

const isTransactionControl = (text: string) => /^(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(text);

class Counter implements StatementCounts {
  total = 0;
  transaction = 0;
  byText = new Map<string, number>();
  add(text: string) {
    this.total++;
    if (isTransactionControl(text)) this.transaction++;
    this.byText.set(text, (this.byText.get(text) ?? 0) + 1);
  }
}

/** Parses one connection's frontend stream and counts its statements. */
function frontendParser(counter: Counter) {
  let buf: Buffer = Buffer.alloc(0);
  let startup = true;
  const statements = new Map<string, string>(); // prepared statement name → text
  const portals = new Map<string, string>(); // portal name → text
  const cstring = (b: Buffer, at: number): [string, number] => {
    const end = b.indexOf(0, at);
    return [b.toString('utf8', at, end), end + 1];
  };
  return (chunk: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
    for (;;) {
      if (startup) {
        if (buf.length < 8) return;
        const len = buf.readInt32BE(0);
        if (buf.length < len) return;
        const code = buf.readInt32BE(4);
        buf = buf.subarray(len);
        if (!STARTUP_CODES.has(code)) startup = false;
        continue;
      }
      if (buf.length < 5) return;
      const type = String.fromCharCode(buf[0]!);
      const len = buf.readInt32BE(1);
      if (buf.length < 1 + len) return;
      const body = buf.subarray(5, 1 + len);
      buf = buf.subarray(1 + len);
      if (type === 'Q') {
        const [text] = cstring(body, 0);
        for (const part of text.split(/;\s*(?=\S)/)) if (part.trim()) counter.add(normalise(part));
      } else if (type === 'P') {
        const [name, at] = cstring(body, 0);
        const [text] = cstring(body, at);
        statements.set(name, normalise(text));
      } else if (type === 'B') {
        const [portal, at] = cstring(body, 0);
        const [statement] = cstring(body, at);
        portals.set(portal, statements.get(statement) ?? '?');
      } else if (type === 'E') {
        const [portal] = cstring(body, 0);
        counter.add(portals.get(portal) ?? '?');
      }
    }
  };
}

export interface CountingProxy {
  port: number;
  /** A copy of the counts so far. */
  snapshot(): StatementCounts;
  close(): Promise<void>;
}

/** Listens on a free port of 127.0.0.1 and forwards every connection to `target`, counting its statements. */
export async function startCountingProxy(target: { host: string; port: number }): Promise<CountingProxy> {
  const counter = new Counter();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const parse = frontendParser(counter);
    client.on('data', (d) => {
      parse(d);
      if (!upstream.write(d)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (d) => {
      if (!client.write(d)) upstream.pause();
    });
    client.on('drain', () => upstream.resume());
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve, reject) => server.listen(0, '127.0.0.1', resolve).once('error', reject));
  return {
    port: (server.address() as net.AddressInfo).port,
    snapshot: () => ({ total: counter.total, transaction: counter.transaction, byText: new Map(counter.byText) }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** What happened between two snapshots. */
export function difference(from: StatementCounts, to: StatementCounts): StatementCounts {
  const byText = new Map<string, number>();
  for (const [k, v] of to.byText) {
    const d = v - (from.byText.get(k) ?? 0);
    if (d) byText.set(k, d);
  }
  return { total: to.total - from.total, transaction: to.transaction - from.transaction, byText };
}
