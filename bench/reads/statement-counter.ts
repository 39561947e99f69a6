/**
 * A counting TCP proxy in front of PostgreSQL: the API under test connects to it instead of to
 * PostgreSQL, and every statement it sends is counted (a simple Query 'Q' or an extended-protocol
 * Execute 'E'), transaction control (begin/commit/rollback) apart. Bytes are forwarded unchanged.
 * Load-insensitive: statements per request do not depend on how busy the machine is.
 */
import net from 'node:net';

export interface StatementCounter {
  port: number;
  /** Statements sent so far, and how many of them were begin/commit/rollback/savepoint/release. */
  counts(): { total: number; transaction: number };
  close(): Promise<void>;
}

const STARTUP_CODES = new Set([80877103 /* SSLRequest */, 80877104 /* GSSENCRequest */, 80877102 /* CancelRequest */]);
const isTransactionControl = (text: string) => /^\s*(begin|start transaction|commit|rollback|savepoint|release)\b/i.test(text);

export async function startStatementCounter(target: { host: string; port: number }): Promise<StatementCounter> {
  let total = 0;
  let transaction = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let buf: Buffer = Buffer.alloc(0);
    let started = false;
    // The statement text of the last Parse per statement name, so an Execute can be classified.
    const parsed = new Map<string, string>();
    let bound = '';
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (!started) {
          if (buf.length < 8) return;
          const len = buf.readInt32BE(0);
          if (buf.length < len) return;
          if (!STARTUP_CODES.has(buf.readInt32BE(4))) started = true;
          buf = buf.subarray(len);
          continue;
        }
        if (buf.length < 5) return;
        const type = String.fromCharCode(buf[0]!);
        const len = buf.readInt32BE(1);
        if (buf.length < len + 1) return;
        const body = buf.subarray(5, len + 1);
        if (type === 'Q') {
          const text = body.toString('utf8', 0, Math.max(0, body.length - 1));
          total++;
          if (isTransactionControl(text)) transaction++;
        } else if (type === 'P') {
          const nameEnd = body.indexOf(0);
          const textEnd = body.indexOf(0, nameEnd + 1);
          parsed.set(body.toString('utf8', 0, nameEnd), body.toString('utf8', nameEnd + 1, textEnd));
        } else if (type === 'B') {
          const portalEnd = body.indexOf(0);
          const stmtEnd = body.indexOf(0, portalEnd + 1);
          bound = parsed.get(body.toString('utf8', portalEnd + 1, stmtEnd)) ?? '';
        } else if (type === 'E') {
          total++;
          if (isTransactionControl(bound)) transaction++;
        }
        buf = buf.subarray(len + 1);
      }
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    counts: () => ({ total, transaction }),
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
