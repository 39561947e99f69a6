/**
 * CORS is open only where other sites' browsers legitimately call the API — the public checkout and
 * the customer portal — and never with credentials; seller routes send no CORS headers at all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
const origin = 'https://shop.example.com';

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(() => srv?.close());

const preflight = (path: string, headers = 'authorization, content-type') =>
  fetch(`${srv.url}${path}`, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': headers },
  });

describe('CORS', () => {
  it('answers preflights of the customer portal and the public checkout for any origin, without credentials', async () => {
    for (const path of ['/v1/customer-portal/orders/', '/v1/checkouts/client/some-client-secret/confirm']) {
      const res = await preflight(path);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-headers')).toMatch(/authorization/i);
      expect(res.headers.get('access-control-allow-methods')).toContain('POST');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const read = await fetch(`${srv.url}/v1/checkouts/client/not-a-client-secret`, { headers: { origin } });
    expect(read.status).toBe(404);
    expect(read.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('sends no CORS headers on seller routes, so other sites cannot read them', async () => {
    const s = await seller(srv.url);
    const res = await fetch(`${srv.url}/v1/products/`, { headers: { origin, authorization: `Bearer ${s.token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    const pre = await preflight('/v1/products/');
    expect(pre.headers.get('access-control-allow-origin')).toBeNull();
    expect(pre.status).not.toBe(204);
  });
});
