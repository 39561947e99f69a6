/**
 * Webhooks end to end: outbox → dispatcher → delivery workflow → a local receiver that verifies every
 * delivery with `validateEvent` from `@polar-sh/sdk/webhooks`. Retry delays are shortened through
 * configuration; the schedule's shape is the production one.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateEvent } from '@polar-sh/sdk/webhooks';
import { json, seller, startTestServer, waitForMail, type TestServer } from '../harness.ts';

interface Received {
  id: string;
  type: string;
  dataId: string;
}

/** A webhook receiver: verifies the signature, answers `failuresBefore(id)` 500s per webhook-id first. */
async function receiver(secretOf: () => string, failuresBefore: (webhookId: string) => number) {
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
        if (n <= failuresBefore(id)) {
          res.writeHead(500).end('temporarily down');
          return;
        }
        accepted.push({ id, type: event.type, dataId: event.data.id });
        res.writeHead(202).end('ok');
      } catch (err) {
        rejected.push(`${(err as Error).name}: ${(err as Error).message}`);
        res.writeHead(400).end('bad signature');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    accepted,
    attempts,
    rejected,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function until<T>(what: string, fn: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    env: {
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '400',
      WEBHOOK_MAX_ATTEMPTS: '4',
      WEBHOOK_DISABLE_AFTER: '3',
    },
  });
});
afterAll(async () => {
  await srv?.close();
});

const api = (token: string) => ({
  post: (path: string, body: unknown) =>
    fetch(`${srv.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }),
  get: (path: string) => fetch(`${srv.url}${path}`, { headers: { authorization: `Bearer ${token}` } }),
  patch: (path: string, body: unknown) =>
    fetch(`${srv.url}${path}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    }),
});

const SCOPES = ['products:read', 'products:write', 'webhooks:read', 'webhooks:write'];
const product = (name: string) => ({ name, prices: [{ amount_type: 'fixed', price_amount: 1500 }] });

describe('webhook delivery', () => {
  it('signs deliveries so the official SDK verifies them, and retries a receiver that is down until it recovers', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret, () => 2);
    try {
      const created = await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] });
      expect(created.status).toBe(201);
      const endpoint = await json(created);
      secret = endpoint.secret;
      expect(secret).toMatch(/^whsec_/);
      expect(endpoint).toMatchObject({ format: 'raw', enabled: true, events: ['product.created'], organization_id: s.organization.id });

      const products = [];
      for (const name of ['One', 'Two', 'Three']) products.push(await json(await api(s.token).post('/v1/products/', product(name))));

      await until('every event delivered', () => rx.accepted.length >= 3);
      expect(rx.accepted.map((r) => r.dataId).sort()).toEqual(products.map((p) => p.id).sort());
      expect(rx.accepted.every((r) => r.type === 'product.created')).toBe(true);
      expect(rx.rejected).toEqual([]);
      // Each webhook-id was retried with the same id until acknowledged: two 500s, then 202.
      for (const r of rx.accepted) expect(rx.attempts.get(r.id)).toBe(3);

      // The receiver answers before the worker records the attempt, so the last records may trail by a moment.
      const deliveries = await until('every attempt recorded', async () => {
        const page = await json(await api(s.token).get(`/v1/webhooks/deliveries?endpoint_id=${endpoint.id}&limit=100`));
        return page.pagination.total_count >= 9 && page;
      });
      expect(deliveries.pagination.total_count).toBe(9);
      const codes = deliveries.items.map((d: { http_code: number }) => d.http_code).sort();
      expect(codes).toEqual([202, 202, 202, 500, 500, 500, 500, 500, 500]);
      expect(deliveries.items.find((d: { succeeded: boolean }) => d.succeeded).webhook_event).toMatchObject({ succeeded: true, last_http_code: 202, type: 'product.created' });
    } finally {
      await rx.close();
    }
  }, 120_000);

  it('redelivers an event with the same webhook-id', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret, () => 0);
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] }));
      secret = endpoint.secret;
      await api(s.token).post('/v1/products/', product('Again'));
      const first = await until('delivery', () => rx.accepted[0]);
      const res = await api(s.token).post(`/v1/webhooks/events/${first.id}/redeliver`, {});
      expect(res.status).toBe(202);
      await until('redelivery', () => rx.accepted.length >= 2);
      expect(rx.accepted[1]!.id).toBe(first.id);
    } finally {
      await rx.close();
    }
  });

  it('only sends the event types an endpoint subscribed to', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret, () => 0);
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.updated'] }));
      secret = endpoint.secret;
      await api(s.token).post('/v1/products/', product('Quiet'));
      await new Promise((r) => setTimeout(r, 1500));
      expect(rx.attempts.size).toBe(0);
    } finally {
      await rx.close();
    }
  });

  it('disables an endpoint whose last events all failed, and mails the members', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret, () => Number.POSITIVE_INFINITY);
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] }));
      secret = endpoint.secret;
      for (const name of ['Fail A', 'Fail B', 'Fail C']) await api(s.token).post('/v1/products/', product(name));
      const disabled = await until(
        'endpoint disabled',
        async () => {
          const e = await json(await api(s.token).get(`/v1/webhooks/endpoints/${endpoint.id}`));
          return e.enabled === false ? e : undefined;
        },
        // A lost wake-up leaves fan-out to the dispatcher's 30 s poll; once seen on CI, so allow for two.
        100_000,
      );
      expect(disabled.enabled).toBe(false);
      expect(rx.accepted).toEqual([]);
      const mails = await waitForMail(s.email, 20_000, 'Webhook endpoint disabled');
      expect(mails.map((m) => m.subject)).toContain('Webhook endpoint disabled in Test Organization');
      // Every event was tried the configured number of times.
      for (const n of rx.attempts.values()) expect(n).toBe(4);

      // Re-enabled, it receives new events again.
      const re = await api(s.token).patch(`/v1/webhooks/endpoints/${endpoint.id}`, { enabled: true });
      expect((await json(re)).enabled).toBe(true);
    } finally {
      await rx.close();
    }
  }, 120_000);
});

describe('webhook endpoints API', () => {
  it('validates URLs and secrets, and scopes endpoints to their organization', async () => {
    const a = await seller(srv.url, SCOPES);
    const b = await seller(srv.url, SCOPES);
    const badUrl = await api(a.token).post('/v1/webhooks/endpoints', { url: 'http://example.com/hook', events: [] });
    expect(badUrl.status).toBe(422);
    expect((await json(badUrl)).detail[0].loc).toEqual(['body', 'url']);
    const shortSecret = await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', secret: 'short', events: [] });
    expect(shortSecret.status).toBe(422);
    const badType = await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', events: ['product.exploded'] });
    expect(badType.status).toBe(422);

    const own = await json(
      await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', secret: 'x'.repeat(40), events: ['order.paid'] }),
    );
    expect(own.secret).toBe('x'.repeat(40));
    expect((await api(b.token).get(`/v1/webhooks/endpoints/${own.id}`)).status).toBe(404);
    expect((await json(await api(b.token).get('/v1/webhooks/endpoints'))).items).toEqual([]);
    expect((await api(b.token).post(`/v1/webhooks/events/${own.id}/redeliver`, {})).status).toBe(404);
    const del = await fetch(`${srv.url}/v1/webhooks/endpoints/${own.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${a.token}` } });
    expect(del.status).toBe(204);
    expect((await api(a.token).get(`/v1/webhooks/endpoints/${own.id}`)).status).toBe(404);
  });
});
