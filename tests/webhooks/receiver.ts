/**
 * A local webhook receiver for tests: verifies every request with `validateEvent` from
 * `@polar-sh/sdk/webhooks` and answers as the test says (per webhook-id, or for everything).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { validateEvent } from '@polar-sh/sdk/webhooks';

export interface Received {
  id: string;
  type: string;
  dataId: string;
  at: number;
}

export interface Receiver {
  url: string;
  port: number;
  /** Requests that verified and were answered 2xx, in arrival order. */
  accepted: Received[];
  /** Requests per webhook-id (any answer). */
  attempts: Map<string, number>;
  /** Verification failures. */
  rejected: string[];
  /** Distinct webhook-ids accepted. */
  acceptedIds(): Set<string>;
  close(): Promise<void>;
}

/**
 * `answer(webhookId, attemptNumber)` decides the status of each verified request (default 202).
 */
export async function receiver(secretOf: () => string, answer: (webhookId: string, attempt: number) => number = () => 202): Promise<Receiver> {
  const accepted: Received[] = [];
  const attempts = new Map<string, number>();
  const rejected: string[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
      const id = headers['webhook-id']!;
      const n = (attempts.get(id) ?? 0) + 1;
      attempts.set(id, n);
      try {
        const event = validateEvent(body, headers, secretOf()) as { type: string; data: { id: string } };
        const status = answer(id, n);
        if (status >= 200 && status < 300) accepted.push({ id, type: event.type, dataId: event.data.id, at: Date.now() });
        res.writeHead(status).end(status >= 300 ? 'internal detail that must not be echoed' : 'ok');
      } catch (err) {
        rejected.push(`${(err as Error).name}: ${(err as Error).message}`);
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    accepted,
    attempts,
    rejected,
    acceptedIds: () => new Set(accepted.map((a) => a.id)),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Polls `fn` every 100 ms until it answers something truthy; fails after `timeoutMs` naming `what`. */
export async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export function bearer(base: string, token: string) {
  const send = (method: string) => (path: string, body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  return { post: send('POST'), patch: send('PATCH'), get: send('GET'), delete: send('DELETE') };
}
