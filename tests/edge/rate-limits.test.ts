/**
 * /v1 request limits: an organization's tokens share one allowance, another organization is not
 * affected, anonymous callers are counted per address; over the limit a 429 TooManyRequests with
 * Retry-After, and RateLimit-* on every answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;

beforeAll(async () => {
  srv = await startTestServer({
    worker: false,
    env: { RATE_LIMIT_ENABLED: 'true', API_RATE_LIMIT_PER_MINUTE: '5', API_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '3' },
  });
});
afterAll(() => srv?.close());

const products = (token: string) => fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${token}` } });
const anonymous = (address: string) =>
  fetch(`${srv.url}/v1/checkouts/client/not-a-client-secret`, { headers: { 'x-forwarded-for': address } });

describe('/v1 rate limits', () => {
  it("shares one allowance between an organization's tokens and leaves other organizations alone", async () => {
    const a = await seller(srv.url);
    const b = await seller(srv.url);
    const second = await fetch(`${srv.url}/v1/organization-access-tokens/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: a.cookie },
      body: JSON.stringify({ organization_id: a.organization.id, comment: 'second', scopes: ['products:read'] }),
    });
    expect(second.status).toBe(201);
    const token2 = (await json(second)).token as string;

    const statuses: number[] = [];
    const remaining: (string | null)[] = [];
    for (const token of [a.token, token2, a.token, token2, a.token]) {
      const res = await products(token);
      statuses.push(res.status);
      remaining.push(res.headers.get('ratelimit-remaining'));
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);

    const over = await products(token2);
    expect(over.status).toBe(429);
    expect(over.headers.get('ratelimit-limit')).toBe('5');
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await json(over)).toMatchObject({ error: 'TooManyRequests' });

    const other = await products(b.token);
    expect(other.status).toBe(200);
    expect(other.headers.get('ratelimit-remaining')).toBe('4');
  });

  it('counts anonymous callers per address', async () => {
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await anonymous('203.0.113.7')).status);
    expect(first).toEqual([404, 404, 404]);
    const over = await anonymous('203.0.113.7');
    expect(over.status).toBe(429);
    expect(over.headers.get('retry-after')).not.toBeNull();
    expect((await anonymous('203.0.113.8')).status).toBe(404);
  });
});
