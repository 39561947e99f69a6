/**
 * Webhooks end to end: outbox → dispatcher (fan-out, first attempt) → retry workflow → a local
 * receiver that verifies every delivery with `validateEvent` from `@polar-sh/sdk/webhooks`. Retry
 * delays are shortened through configuration; the schedule's shape is the production one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, waitForMail, type TestServer } from '../harness.ts';
import { bearer, receiver, until } from './receiver.ts';

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

const api = (token: string) => bearer(srv.url, token);
const SCOPES = ['products:read', 'products:write', 'webhooks:read', 'webhooks:write'];
const product = (name: string) => ({ name, prices: [{ amount_type: 'fixed', price_amount: 1500 }] });

async function deliveriesOf(token: string, endpointId: string, atLeast: number) {
  return until(`${atLeast} attempts recorded`, async () => {
    const page = await json(await api(token).get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}&limit=100`));
    return page.pagination.total_count >= atLeast && page;
  });
}

describe('webhook delivery', () => {
  it('signs deliveries so the official SDK verifies them, and retries a receiver that is down until it recovers', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret, (_id, n) => (n <= 2 ? 500 : 202));
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
      const deliveries = await deliveriesOf(s.token, endpoint.id, 9);
      expect(deliveries.pagination.total_count).toBe(9);
      const codes = deliveries.items.map((d: { http_code: number }) => d.http_code).sort();
      expect(codes).toEqual([202, 202, 202, 500, 500, 500, 500, 500, 500]);
      expect(deliveries.items.find((d: { succeeded: boolean }) => d.succeeded).webhook_event).toMatchObject({ succeeded: true, last_http_code: 202, type: 'product.created' });
      // The log keeps a summary of each answer, never the receiver's body.
      const failedAttempt = deliveries.items.find((d: { http_code: number }) => d.http_code === 500);
      expect(failedAttempt.response).toMatch(/^HTTP 500/);
      expect(JSON.stringify(deliveries.items)).not.toContain('internal detail');
    } finally {
      await rx.close();
    }
  }, 120_000);

  it('redelivers an event with the same webhook-id', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret);
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] }));
      secret = endpoint.secret;
      await api(s.token).post('/v1/products/', product('Again'));
      const first = await until('delivery', () => rx.accepted[0]);
      await deliveriesOf(s.token, endpoint.id, 1);
      const res = await api(s.token).post(`/v1/webhooks/events/${first.id}/redeliver`, {});
      expect(res.status).toBe(202);
      await until('redelivery', () => rx.accepted.length >= 2);
      expect(rx.accepted[1]!.id).toBe(first.id);
      expect(rx.accepted[1]!.dataId).toBe(first.dataId);
    } finally {
      await rx.close();
    }
  });

  it('only sends the event types an endpoint subscribed to', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    const rx = await receiver(() => secret);
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.updated'] }));
      secret = endpoint.secret;
      const p = await json(await api(s.token).post('/v1/products/', product('Quiet')));
      expect((await api(s.token).patch(`/v1/products/${p.id}`, { name: 'Renamed' })).status).toBe(200);
      // The update was committed after the creation; once its delivery arrived, the creation's would have too.
      await until('product.updated delivered', () => rx.accepted.find((r) => r.type === 'product.updated'));
      expect(rx.accepted.map((r) => r.type)).toEqual(['product.updated']);
      expect(rx.attempts.size).toBe(1);
    } finally {
      await rx.close();
    }
  });

  it('disables an endpoint whose last events all failed, mails the members, and delivers again once re-enabled', async () => {
    const s = await seller(srv.url, SCOPES);
    let secret = '';
    let down = true;
    const rx = await receiver(() => secret, () => (down ? 500 : 202));
    try {
      const endpoint = await json(await api(s.token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] }));
      secret = endpoint.secret;
      for (const name of ['Fail A', 'Fail B', 'Fail C']) await api(s.token).post('/v1/products/', product(name));
      const disabled = await until('endpoint disabled', async () => {
        const e = await json(await api(s.token).get(`/v1/webhooks/endpoints/${endpoint.id}`));
        return e.enabled === false ? e : undefined;
      });
      expect(disabled.enabled).toBe(false);
      expect(rx.accepted).toEqual([]);
      const mails = await waitForMail(s.email, 20_000, 'Webhook endpoint disabled');
      expect(mails.map((m) => m.subject)).toContain('Webhook endpoint disabled in Test Organization');
      // The three events each reached the receiver the configured number of times.
      expect(rx.attempts.size).toBe(3);
      for (const n of rx.attempts.values()) expect(n).toBe(4);
      const log = await deliveriesOf(s.token, endpoint.id, 12);
      expect(log.items.every((d: { succeeded: boolean }) => !d.succeeded)).toBe(true);
      expect(log.items.map((d: { webhook_event: { succeeded: boolean } }) => d.webhook_event.succeeded)).toContain(false);

      // Re-enabled (and the receiver fixed), it receives new events again.
      down = false;
      const re = await api(s.token).patch(`/v1/webhooks/endpoints/${endpoint.id}`, { enabled: true });
      expect((await json(re)).enabled).toBe(true);
      const fresh = await json(await api(s.token).post('/v1/products/', product('Back')));
      const arrived = await until('a new event after re-enabling', () => rx.accepted.find((r) => r.dataId === fresh.id));
      expect(arrived.type).toBe('product.created');
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
    const empty = await api(a.token).post('/v1/webhooks/endpoints', { url: '', events: [] });
    expect(empty.status).toBe(422);
    const shortSecret = await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', secret: 'short', events: [] });
    expect(shortSecret.status).toBe(422);
    const badType = await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', events: ['product.exploded'] });
    expect(badType.status).toBe(422);

    const own = await json(
      await api(a.token).post('/v1/webhooks/endpoints', { url: 'https://example.com/hook', secret: 'x'.repeat(40), events: ['order.paid'] }),
    );
    expect(own.secret).toBe('x'.repeat(40));
    expect((await api(a.token).patch(`/v1/webhooks/endpoints/${own.id}`, { url: '' })).status).toBe(422);
    expect((await api(b.token).get(`/v1/webhooks/endpoints/${own.id}`)).status).toBe(404);
    expect((await json(await api(b.token).get('/v1/webhooks/endpoints'))).items).toEqual([]);
    expect((await api(b.token).post(`/v1/webhooks/events/${own.id}/redeliver`, {})).status).toBe(404);
    const del = await api(a.token).delete(`/v1/webhooks/endpoints/${own.id}`);
    expect(del.status).toBe(204);
    expect((await api(a.token).get(`/v1/webhooks/endpoints/${own.id}`)).status).toBe(404);
  });
});
