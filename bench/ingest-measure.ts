/**
 * Load-insensitive figures for bench/ingest: CPU time of processes (from /proc) and SQL statements
 * counted by a small proxy between the API and PostgreSQL (the embedded PostgreSQL has no
 * pg_stat_statements, and the shared server is not restarted for a benchmark).
 */
import { readFileSync, readdirSync } from 'node:fs';
import net from 'node:net';

const BEGIN = /^\s*(begin|start transaction)/i;
const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of a process in ms, 0 when it is gone or unreadable. */
export function cpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return 0;
  }
}

/** A process and its descendants (tsx may run the script in a child node). */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      parent.set(Number(d), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // exited meanwhile
    }
  }
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const [pid, ppid] of parent) if (ppid === out[i]) out.push(pid);
  return out;
}

export const sumCpuMs = (pids: number[]) => pids.reduce((s, p) => s + cpuMs(p), 0);

/**
 * Counts what clients send through it: a simple Query ('Q') or an extended-protocol Execute ('E')
 * is one statement; `begin` is counted apart as a transaction. Bytes are forwarded unchanged.
 */
export class CountingProxy {
  statements = 0;
  transactions = 0;
  /** Sees every chunk each way, per proxied connection (bench/ingest-timeline.ts). */
  tap?: (connection: number) => (side: 'client' | 'server', chunk: Buffer) => void;
  private connections = 0;
  private server?: net.Server;

  constructor(
    private readonly host: string,
    private readonly port: number,
  ) {}

  async listen(): Promise<number> {
    this.server = net.createServer((client) => {
      const upstream = net.connect(this.port, this.host);
      const tap = this.tap?.(this.connections++);
      // As pg's own sockets: without this, Nagle holds a COPY's last short segment until the previous one is acknowledged.
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      client.pause();
      upstream.once('connect', () => client.resume());
      let buf: Buffer = Buffer.alloc(0);
      let started = false;
      client.on('data', (chunk: Buffer) => {
        upstream.write(chunk);
        tap?.('client', chunk);
        buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
        for (;;) {
          if (!started) {
            if (buf.length < 8) break;
            const len = buf.readInt32BE(0);
            if (buf.length < len) break;
            if (buf.readInt32BE(4) === 196608) started = true; // StartupMessage (not SSLRequest)
            buf = buf.subarray(len);
            continue;
          }
          if (buf.length < 5) break;
          const len = buf.readInt32BE(1);
          if (buf.length < len + 1) break;
          const type = String.fromCharCode(buf[0]!);
          if (type === 'Q') {
            this.statements++;
            if (BEGIN.test(buf.toString('utf8', 5, Math.min(len + 1, 40)))) this.transactions++;
          } else if (type === 'E') this.statements++;
          else if (type === 'P') {
            // Parse: statement name (C string), then the text.
            const at = buf.indexOf(0, 5) + 1;
            if (BEGIN.test(buf.toString('utf8', at, Math.min(len + 1, at + 40)))) this.transactions++;
          }
          buf = buf.subarray(len + 1);
        }
      });
      upstream.on('data', (chunk: Buffer) => {
        client.write(chunk);
        tap?.('server', chunk);
      });
      const close = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  close(): void {
    this.server?.close();
  }
}
