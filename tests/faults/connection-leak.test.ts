/**
 * A connection taken from a pool and never given back makes a test file's close() hang (pool end()
 * waits for it). The harness names such a connection by the stack that took it and fails the file;
 * this file shows the check finds one, and that requests ending in errors leave none behind.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Pool } from 'pg';
import { depsPools } from '../../api/src/deps.ts';
import { ProcessorError } from '../../api/src/modules/payments/processor.ts';
import { connectionsStillLent, json, seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
let s: Awaited<ReturnType<typeof seller>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await seller(srv.url);
});
afterAll(async () => {
  await srv?.close();
});

const api = (method: string, path: string, body?: unknown, signal?: AbortSignal) =>
  fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });

it('names a connection taken and not given back by the code that took it', async () => {
  const [pool] = (await depsPools(srv.deps)) as [Pool];
  const client = await pool.connect();
  const lent = await connectionsStillLent(srv.deps, 300);
  expect(lent).toHaveLength(1);
  expect(lent[0]).toContain('connection-leak.test.ts');
  client.release();
  expect(await connectionsStillLent(srv.deps, 300)).toEqual([]);
});

it('gives every connection back after requests that fail, conflict, are abandoned or roll back', async () => {
  // A refused body, an unknown id, a unique-slug conflict inside a transaction, and a processor call
  // that fails inside the sandbox's own transaction (its own pool).
  expect((await api('POST', '/v1/products/', { name: '' })).status).toBe(422);
  expect((await api('GET', '/v1/products/00000000-0000-0000-0000-000000000000')).status).toBe(404);
  const slug = `leak-${Date.now()}`;
  const twice = await Promise.all(
    [1, 2].map(() =>
      fetch(`${srv.url}/v1/organizations/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: s.cookie },
        body: JSON.stringify({ name: 'Twice', slug }),
      }),
    ),
  );
  expect(twice.filter((r) => r.status === 201)).toHaveLength(1);
  expect(twice.filter((r) => r.status >= 400 && r.status < 500)).toHaveLength(1);
  await expect(srv.deps.processor.refund({ chargeId: 'ch_missing', amount: 100, idempotencyKey: `leak-${Date.now()}` })).rejects.toBeInstanceOf(
    ProcessorError,
  );
  // Requests the client gives up on while the server works on them.
  await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const abort = new AbortController();
      const res = api('POST', '/v1/products/', { name: `Abandoned ${i}`, prices: [{ amount_type: 'free' }] }, abort.signal);
      setTimeout(() => abort.abort(), 5 * i);
      await res.then(json).catch(() => {});
    }),
  );
  expect(await connectionsStillLent(srv.deps)).toEqual([]);
  // Two pools: the API's and the sandbox processor's; neither lends anything.
  const pools = await depsPools(srv.deps);
  expect(pools).toHaveLength(2);
  for (const p of pools) expect(p.totalCount - p.idleCount).toBe(0);
});

it('closes with every pool ended and nothing lent', async () => {
  const other = await startTestServer({ worker: false });
  const o = await seller(other.url);
  const res = await fetch(`${other.url}/v1/products/`, { headers: { authorization: `Bearer ${o.token}` } });
  expect(res.status).toBe(200);
  await other.deps.processor.refund({ chargeId: 'ch_missing', amount: 1, idempotencyKey: `leak-${Date.now()}` }).catch(() => {});
  const pools = await depsPools(other.deps);
  await other.close();
  for (const p of pools) {
    expect(p.totalCount).toBe(0);
    expect(p.ended).toBe(true);
  }
});

it('a server closed while a connection is still lent fails its close() naming the taker, and the pool still ends', { timeout: 120_000 }, async () => {
  const other = await startTestServer({ worker: false });
  const [pool] = (await depsPools(other.deps)) as [Pool];
  const held = await pool.connect();
  await expect(other.close()).rejects.toThrow(/LEAK: 1 connection\(s\)[\s\S]*connection-leak\.test\.ts/);
  // The lent connection was cut instead of holding the pool's end() (and the test file) forever.
  expect(pool.totalCount).toBe(0);
  expect(pool.ended).toBe(true);
  await expect(held.query('select 1')).rejects.toThrow();
});
