/**
 * Events ingested through the COPY path come back exactly as sent, whatever characters COPY's text
 * format treats specially (backslash, tab, newline, carriage return) or JSON escapes, in the name,
 * the external customer id and metadata keys and values.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, usageSeller } from '../catalogue/events-helpers.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof usageSeller>>;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await usageSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

const awkward = ['a\\b', 'tab\there', 'line\nbreak', 'cr\rlf\r\n', '\\N', '\\\\t', 'quote"s', 'ünï€ødé 🚀', 'plain'];

describe('ingest by COPY', () => {
  it('stores names, external ids and metadata with special characters unchanged', async () => {
    const events = awkward.map((v, i) => ({
      name: `${v}-${i}`,
      external_customer_id: `ext ${v}`,
      timestamp: new Date(Date.UTC(2025, 0, 1, 0, i)).toISOString(),
      metadata: { [`k${v}`.slice(0, 40)]: v, n: i, ok: i % 2 === 0 },
    }));
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ inserted: awkward.length });
    const list = await call(srv, s.token, 'GET', '/v1/events/?limit=100&sorting=timestamp');
    expect(list.status).toBe(200);
    expect(
      list.body.items.map((e: { name: string; external_customer_id: string; timestamp: string; metadata: unknown }) => ({
        name: e.name,
        external_customer_id: e.external_customer_id,
        timestamp: e.timestamp,
        metadata: e.metadata,
      })),
    ).toEqual(events);
  });
});
