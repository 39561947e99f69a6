/**
 * One signed POST to a webhook receiver. The host is resolved here and, unless private targets are
 * allowed, every address it resolves to must be public (addresses.ts); the connection is made to the
 * address that was checked (the check runs inside the socket's own lookup), so a DNS answer that
 * changes between check and connect cannot redirect it. Redirects are not followed. What is kept of
 * the answer is a short summary (status, type, size), never the body: an internal service must not be
 * readable through the deliveries log.
 */
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { refusedAddress, refusedWebhookUrl } from './addresses.ts';

export interface SendResult {
  /** The receiver's status code; null when no answer came. */
  httpCode: number | null;
  /** What the deliveries log shows: `HTTP 503 Service Unavailable · text/html · 1.2 kB` or the reason nothing was sent. */
  summary: string;
}

const agents = {
  'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
  'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

class Refused extends Error {}

export type Resolver = (hostname: string, family: number | undefined) => Promise<dns.LookupAddress[]>;

const systemResolver: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family: family ?? 0 });

function checkedLookup(allowPrivate: boolean, resolve: Resolver): net.LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname, typeof options.family === 'number' ? options.family : undefined).then((list) => {
      if (!allowPrivate) {
        const bad = list.map((a) => refusedAddress(a.address)).find((r) => r !== null);
        if (bad) return (callback as (e: Error) => void)(new Refused(`${hostname} resolves to ${bad.replace(' is not', ', not')}`));
      }
      if (!list.length) return (callback as (e: Error) => void)(new Error(`${hostname} has no address`));
      if (options.all) return (callback as (e: null, a: dns.LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      (callback as (e: null, a: string, f: number) => void)(null, first.address, first.family);
    }, (err: Error) => (callback as (e: Error) => void)(err));
  };
}

function size(bytes: number): string {
  return bytes < 1024 ? `${bytes} B` : `${(bytes / 1024).toFixed(1)} kB`;
}

function describeError(err: Error & { code?: string }): string {
  if (err instanceof Refused) return `not sent: ${err.message}`;
  switch (err.code) {
    case 'ECONNREFUSED': return 'connection refused';
    case 'ECONNRESET': return 'connection reset by the receiver';
    case 'ENOTFOUND': case 'EAI_AGAIN': return 'host name could not be resolved';
    case 'ETIMEDOUT': case 'ABORT_ERR': return 'timed out';
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable';
    default:
      if (err.code?.startsWith('ERR_TLS') || err.code?.includes('CERT')) return `TLS error (${err.code})`;
      return `request failed (${err.code ?? err.name})`;
  }
}

export async function sendWebhook(opts: {
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  /** Name resolution (the system's by default; tests give their own DNS answers). */
  resolve?: Resolver;
}): Promise<SendResult> {
  const refused = refusedWebhookUrl(opts.url, opts.allowPrivate);
  if (refused) return { httpCode: null, summary: `not sent: ${refused}` };
  const url = new URL(opts.url);
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    const req = transport.request(
      url,
      {
        method: 'POST',
        headers: { ...opts.headers, 'content-length': String(Buffer.byteLength(opts.body)) },
        agent: agents[url.protocol as 'http:' | 'https:'],
        lookup: checkedLookup(opts.allowPrivate, opts.resolve ?? systemResolver),
        signal: AbortSignal.timeout(opts.timeoutMs),
      },
      (res) => {
        let bytes = 0;
        const code = res.statusCode ?? 0;
        const type = String(res.headers['content-type'] ?? '').split(';')[0]!.trim();
        const finish = () => {
          const parts = [`HTTP ${code}${res.statusMessage ? ` ${res.statusMessage}` : ''}`];
          if (type) parts.push(type.slice(0, 60));
          parts.push(size(bytes));
          resolve({ httpCode: code, summary: parts.join(' · ') });
        };
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          // Nothing of the body is kept; a receiver that streams megabytes is cut off.
          if (bytes > 1 << 20) res.destroy();
        });
        res.on('end', finish);
        res.on('close', () => !res.complete && finish());
        res.on('error', () => {});
      },
    );
    req.on('error', (err) => resolve({ httpCode: null, summary: describeError(err) }));
    req.end(opts.body);
  });
}
