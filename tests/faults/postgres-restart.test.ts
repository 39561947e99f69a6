/**
 * PostgreSQL restarted under load: purchases and event ingestion keep running while the database
 * stops for a few seconds and comes back. Requests it catches answer a clean 503 with Retry-After
 * (never a 500), nothing that was acknowledged is lost (every confirmed checkout ends with its one
 * order; every acknowledged batch of events is stored once), and the API and the worker recover on
 * their own: no pooled connection is left behind, the outbox LISTEN is back, a new purchase goes all
 * the way, and the server still shuts down cleanly. The test runs its own PostgreSQL (processes.ts).
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct, sellerWithSdk } from '../catalogue/helpers-c.ts';
import { CONFIRM_SCOPES, buyer, call, confirmRaw, until, type Seller } from '../confirm/helpers.ts';
import { startOwnPostgres, type OwnPostgres } from './processes.ts';

let pg: OwnPostgres;
let srv: TestServer | undefined;
let s: Seller;

beforeAll(async () => {
  pg = await startOwnPostgres('pg-restart');
  srv = await startTestServer({ databaseUrl: pg.databaseUrl });
  s = await sellerWithSdk(srv, [...CONFIRM_SCOPES, 'events:write', 'events:read']);
}, 240_000);

afterAll(async () => {
  await srv?.close().catch(() => {});
  await pg?.close();
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PostgreSQL restarted while purchases and ingestion run', () => {
  it('answers 503 with Retry-After meanwhile, loses nothing acknowledged, and recovers by itself', { timeout: 240_000 }, async () => {
    const server = srv!;
    const product = await createProduct(server.url, s.token, { name: 'Restart-proof' });
    const refused: { status: number; retryAfter: string | null; error: unknown }[] = [];
    const note = (r: { status: number; headers?: Headers; body: any }) => {
      if (r.status >= 500) refused.push({ status: r.status, retryAfter: r.headers?.get('retry-after') ?? null, error: r.body?.error });
    };
    const confirmed: string[] = [];
    const ingested: string[] = [];
    let running = true;

    const buyers = Array.from({ length: 3 }, async () => {
      while (running) {
        const c = await call(server.url, s.token, 'POST', '/v1/checkouts/', { product_id: product.id });
        note(c);
        if (c.status !== 201) continue;
        const r = await confirmRaw(server, c.body.client_secret, { ...buyer(`restart-${randomUUID().slice(0, 8)}@example.com`), confirmation_token_id: 'tok_visa' });
        note(r);
        if (r.status === 200) confirmed.push(c.body.id);
      }
    });
    const ingesters = Array.from({ length: 2 }, async () => {
      while (running) {
        const batch = randomUUID();
        const events = Array.from({ length: 20 }, (_, i) => ({ name: 'api.call', external_customer_id: `ext-${i % 4}`, metadata: { batch } }));
        const r = await call(server.url, s.token, 'POST', '/v1/events/ingest', { events });
        note(r);
        if (r.status === 200) {
          expect(r.body.inserted).toBe(20);
          ingested.push(batch);
        }
      }
    });

    // Load before, a stop of 4 s, load after.
    await sleep(3_000);
    await pg.stop();
    await sleep(4_000);
    await pg.start();
    await sleep(6_000);
    running = false;
    await Promise.all([...buyers, ...ingesters]);

    // The outage was seen, and seen as a clean 503 with Retry-After, never a 500.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.filter((r) => r.status !== 503 || !r.retryAfter || r.error !== 'ServiceUnavailable')).toEqual([]);

    // Every confirmed purchase ends with exactly one paid order, however the outage cut through it.
    expect(confirmed.length).toBeGreaterThan(0);
    for (const checkoutId of confirmed) {
      const orders = await until(async () => {
        const r = await call(server.url, s.token, 'GET', `/v1/orders/?checkout_id=${checkoutId}`);
        return r.status === 200 && r.body.items.length > 0 && r.body.items;
      }, 120_000);
      expect(orders.map((o: { status: string }) => o.status)).toEqual(['paid']);
    }

    // Every acknowledged batch of events is stored, whole and once.
    expect(ingested.length).toBeGreaterThan(0);
    const em = server.deps.orm.em.fork();
    const rows = await em.execute<{ batch: string; n: string }[]>(
      `select metadata->>'batch' as batch, count(*) as n from events where organization_id = ? group by 1`,
      [s.organization.id],
    );
    const stored = new Map(rows.map((r) => [r.batch, Number(r.n)]));
    expect(ingested.map((b) => stored.get(b))).toEqual(ingested.map(() => 20));

    // Recovered without a restart of the API or the worker: a new purchase goes all the way ...
    const c = await call(server.url, s.token, 'POST', '/v1/checkouts/', { product_id: product.id });
    expect(c.status).toBe(201);
    const r = await confirmRaw(server, c.body.client_secret, { ...buyer(`after-${randomUUID().slice(0, 8)}@example.com`), confirmation_token_id: 'tok_visa' });
    expect(r.status).toBe(200);
    const after = await until(async () => {
      const o = await call(server.url, s.token, 'GET', `/v1/orders/?checkout_id=${c.body.id}`);
      return o.body.items?.length === 1 && o.body.items;
    }, 120_000);
    expect(after[0].status).toBe('paid');

    // ... no connection of the pool is still held by a transaction the restart cut (they wedged the
    // pool: every request then waited out the connection timeout) ...
    const pool = (await server.deps.orm.em.getConnection().getNativeClient()) as Pool;
    await until(async () => pool.idleCount === pool.totalCount, 30_000);
    expect(pool.waitingCount).toBe(0);

    // ... the worker listens for outbox commits again ...
    await until(async () => {
      const listening = await em.execute<{ n: string }[]>(
        `select count(*) as n from pg_stat_activity where datname = current_database() and query = 'LISTEN outbox_events'`,
      );
      return Number(listening[0]?.n) === 1;
    }, 30_000);

    // ... and the server shuts down cleanly (closing the ORM waits for every checked-out connection).
    const closed = server.close().then(() => 'closed');
    srv = undefined;
    expect(await Promise.race([closed, sleep(30_000).then(() => 'still closing after 30 s')])).toBe('closed');
  });
});
