/**
 * While PostgreSQL cannot be reached, the API answers a clean 503 ServiceUnavailable with Retry-After
 * (nothing was saved; the same request later can succeed), never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;

beforeAll(async () => {
  // Port 1 on loopback: nothing listens there, every connection is refused.
  srv = await startTestServer({ worker: false, databaseUrl: 'postgres://postgres:postgres@127.0.0.1:1/unreachable' });
});
afterAll(() => srv?.close());

describe('PostgreSQL unreachable', () => {
  it('answers reads and writes with 503 and Retry-After', async () => {
    const headers = { authorization: 'Bearer polar_oat_0000000000000000000000000000000000000000', 'content-type': 'application/json' };
    const answers = [
      await fetch(`${srv.url}/v1/products/`, { headers }),
      await fetch(`${srv.url}/v1/events/ingest`, { method: 'POST', headers, body: JSON.stringify({ events: [{ name: 'x', external_customer_id: 'c' }] }) }),
      await fetch(`${srv.url}/v1/customer-portal/orders/`, { headers: { authorization: 'Bearer polar_cst_00000000000000000000000000000000' } }),
    ];
    expect(answers.map((r) => r.status)).toEqual([503, 503, 503]);
    for (const r of answers) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await json(r)).toMatchObject({ error: 'ServiceUnavailable' });
    }
  });

  it('answers the auth service (/api/auth) with 503 and Retry-After in its own error shape', async () => {
    const headers = { 'content-type': 'application/json', origin: srv.deps.cfg.PUBLIC_URL };
    const answers = [
      await fetch(`${srv.url}/api/auth/sign-in/email`, { method: 'POST', headers, body: JSON.stringify({ email: 'a@example.com', password: 'correct horse battery' }) }),
      await fetch(`${srv.url}/api/auth/sign-up/email`, { method: 'POST', headers, body: JSON.stringify({ email: 'b@example.com', password: 'correct horse battery', name: 'B' }) }),
    ];
    expect(answers.map((r) => r.status)).toEqual([503, 503]);
    for (const r of answers) {
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await json(r)).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    }
  });
});
