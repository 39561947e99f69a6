/**
 * `Idempotency-Key` on POST /v1 (Stripe's semantics): a retried create with the same key and body
 * answers the first response again and creates nothing more; a different body is a 422; concurrent
 * retries create exactly one record; keys of different callers never collide.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof seller>>;
let b: Awaited<ReturnType<typeof seller>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  [a, b] = await Promise.all([seller(srv.url), seller(srv.url)]);
});
afterAll(() => srv?.close());

const product = (name: string) => ({
  name,
  prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }],
});

function post(token: string, body: unknown, key?: string) {
  return fetch(`${srv.url}/v1/products/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
    body: JSON.stringify(body),
  });
}

async function productNames(token: string): Promise<string[]> {
  const res = await fetch(`${srv.url}/v1/products/?limit=100`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return ((await json(res)).items as { name: string }[]).map((p) => p.name);
}

describe('Idempotency-Key on POST /v1', () => {
  it('replays the first answer to a retry with the same key and body, and creates one product', async () => {
    const key = randomUUID();
    const name = `Retried ${key.slice(0, 8)}`;
    const first = await post(a.token, product(name), key);
    expect(first.status).toBe(201);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const created = await json(first);

    const again = await post(a.token, product(name), key);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await json(again)).toEqual(created);

    expect((await productNames(a.token)).filter((n) => n === name)).toHaveLength(1);
  });

  it('refuses the same key with a different body (422 naming the header) and creates nothing for it', async () => {
    const key = randomUUID();
    const name = `Original ${key.slice(0, 8)}`;
    expect((await post(a.token, product(name), key)).status).toBe(201);
    const other = await post(a.token, product(`Changed ${key.slice(0, 8)}`), key);
    expect(other.status).toBe(422);
    const body = await json(other);
    expect(body.error).toBe('RequestValidationError');
    expect(body.detail[0].loc).toEqual(['header', 'idempotency-key']);
    expect(await productNames(a.token)).not.toContain(`Changed ${key.slice(0, 8)}`);
  });

  it('creates exactly one product when ten retries with one key arrive at once', async () => {
    const key = randomUUID();
    const name = `Concurrent ${key.slice(0, 8)}`;
    const answers = await Promise.all(Array.from({ length: 10 }, () => post(a.token, product(name), key)));
    const statuses = answers.map((r) => r.status);
    // Each answer is the product (first or replayed) or "still in progress" (409): never a second product.
    expect(statuses.filter((s) => s !== 201 && s !== 409)).toEqual([]);
    const ids = new Set<string>();
    for (const r of answers) if (r.status === 201) ids.add((await json(r)).id);
    expect(ids.size).toBe(1);
    expect((await productNames(a.token)).filter((n) => n === name)).toHaveLength(1);

    // Once the first has answered, a retry is a replay of it.
    const later = await post(a.token, product(name), key);
    expect(later.status).toBe(201);
    expect((await json(later)).id).toBe([...ids][0]);
  });

  it('keeps keys of different callers apart', async () => {
    const key = randomUUID();
    const ra = await post(a.token, product(`Shared key A ${key.slice(0, 8)}`), key);
    const rb = await post(b.token, product(`Shared key B ${key.slice(0, 8)}`), key);
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect((await json(ra)).id).not.toBe((await json(rb)).id);
    expect(await productNames(b.token)).toContain(`Shared key B ${key.slice(0, 8)}`);
  });

  it('replays a validation error as well, so a retry never turns a refusal into a create', async () => {
    const key = randomUUID();
    const bad = { name: `Bad ${key.slice(0, 8)}`, prices: [{ amount_type: 'fixed', price_amount: -1, price_currency: 'usd' }] };
    const first = await post(a.token, bad, key);
    expect(first.status).toBe(422);
    const again = await post(a.token, bad, key);
    expect(again.status).toBe(422);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await json(again)).toEqual(await json(first));
  });

  it('refuses a key that is empty, too long or has spaces', async () => {
    for (const key of ['x'.repeat(256), ' ', 'two words']) {
      const res = await post(a.token, product('Never'), key);
      expect(res.status).toBe(422);
      expect((await json(res)).detail[0].loc).toEqual(['header', 'idempotency-key']);
    }
    expect(await productNames(a.token)).not.toContain('Never');
  });
});
