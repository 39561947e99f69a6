/**
 * Webhook events are never lost: a slow fan-out commit, a worker killed between an attempt and its
 * record or between the record and the retry workflow's start, 300 events to two endpoints, and a
 * receiver that is down for 15 s. The worker runs as its own process (tests/crash/worker-process.ts)
 * so an injected fault (workers/src/fault-injection.ts) can delay or kill it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { outboxDispatcherWorkflowId } from '../../workflows/src/ids.ts';
import { startWorkerProcess, waitForExit, type WorkerProcess } from '../crash/worker-process.ts';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { bearer, receiver, until, type Receiver } from './receiver.ts';

const SCOPES = ['products:read', 'products:write', 'webhooks:read', 'webhooks:write', 'customers:read', 'customers:write'];
const WORKER_ENV = {
  WEBHOOK_RETRY_BASE_MS: '1000',
  WEBHOOK_RETRY_MAX_MS: '4000',
  WEBHOOK_MAX_ATTEMPTS: '12',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RECOVERY_SECONDS: '2',
  EMPORIA_DISPATCHER_IDLE_SECONDS: '2',
};

let srv: TestServer;
let worker: WorkerProcess | undefined;
let stateDir: string;
const receivers: Receiver[] = [];
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'webhook-faults-'));
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  // Each test starts its own worker; the next one starts a fresh dispatcher.
  await srv.deps.temporal.workflow.getHandle(outboxDispatcherWorkflowId(srv.deps.cfg.TEMPORAL_TASK_QUEUE)).terminate('next test').catch(() => {});
  for (const r of receivers.splice(0)) await r.close();
});
afterAll(async () => {
  await srv?.close();
  rmSync(stateDir, { recursive: true, force: true });
});

const startWorker = (faults: string[] = []) =>
  startWorkerProcess({
    databaseUrl: srv.databaseUrl,
    taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE,
    faults,
    faultStateDir: stateDir,
    env: WORKER_ENV,
  });

async function endpointFor(token: string, events: string[], answer?: (id: string, n: number) => number) {
  let secret = '';
  const rx = await receiver(() => secret, answer);
  receivers.push(rx);
  const res = await bearer(srv.url, token).post('/v1/webhooks/endpoints', { url: rx.url, events });
  expect(res.status).toBe(201);
  const endpoint = await json(res);
  secret = endpoint.secret;
  return { rx, endpoint };
}

async function createProducts(token: string, names: string[]) {
  const ids: string[] = [];
  for (const name of names) {
    const res = await bearer(srv.url, token).post('/v1/products/', { name, prices: [{ amount_type: 'fixed', price_amount: 900 }] });
    expect(res.status).toBe(201);
    ids.push((await json(res)).id);
  }
  return ids;
}

async function deliveryLog(token: string, endpointId: string) {
  const items: { attempt: number; succeeded: boolean; http_code: number | null; created_at: string; webhook_event: { id: string; succeeded: boolean | null } }[] = [];
  for (let page = 1; ; page++) {
    const body = await json(await bearer(srv.url, token).get(`/v1/webhooks/deliveries?endpoint_id=${endpointId}&limit=100&page=${page}`));
    items.push(...body.items);
    if (page >= body.pagination.max_page) return items;
  }
}

describe('webhook durability', () => {
  it('delivers every event when the fan-out commits slowly (nothing is sent from an uncommitted row)', async () => {
    worker = await startWorker(['webhook-fan-out:before-commit=delay-1500']);
    const s = await seller(srv.url, SCOPES);
    const { rx, endpoint } = await endpointFor(s.token, ['product.created']);
    const ids = await createProducts(s.token, ['Slow A', 'Slow B', 'Slow C', 'Slow D', 'Slow E']);
    await until('all five delivered', () => ids.every((id) => rx.accepted.some((r) => r.dataId === id)), 90_000);
    expect(rx.rejected).toEqual([]);
    const log = await until('all five recorded', async () => {
      const l = await deliveryLog(s.token, endpoint.id);
      return l.filter((d) => d.succeeded).length >= 5 && l;
    });
    expect(log.filter((d) => d.succeeded)).toHaveLength(5);
  }, 120_000);

  it('starts the retries of a failed first attempt after the worker died before starting them', async () => {
    worker = await startWorker(['webhook-first-attempts:before-retry-starts=kill']);
    const s = await seller(srv.url, SCOPES);
    const { rx, endpoint } = await endpointFor(s.token, ['product.created'], (_id, n) => (n === 1 ? 503 : 202));
    const [id] = await createProducts(s.token, ['Crash before retry']);
    // The first attempt (503) is recorded, then the worker dies before starting the retry workflow.
    expect((await waitForExit(worker)).signal).toBe('SIGKILL');
    expect(rx.accepted).toEqual([]);
    worker = await startWorker(['webhook-first-attempts:before-retry-starts=kill']);
    const delivered = await until('delivered after the restart', () => rx.accepted.find((r) => r.dataId === id), 90_000);
    expect(rx.attempts.get(delivered.id)).toBe(2);
    const log = await until('both attempts recorded', async () => {
      const l = await deliveryLog(s.token, endpoint.id);
      return l.length >= 2 && l;
    });
    expect(log.map((d) => [d.attempt, d.http_code]).sort()).toEqual([[1, 503], [2, 202]]);
  }, 150_000);

  it('sends again, with the same webhook-id, an attempt whose record the dying worker never wrote', async () => {
    worker = await startWorker(['webhook-first-attempts:before-record=kill']);
    const s = await seller(srv.url, SCOPES);
    const { rx, endpoint } = await endpointFor(s.token, ['product.created']);
    const [id] = await createProducts(s.token, ['Crash before record']);
    expect((await waitForExit(worker)).signal).toBe('SIGKILL');
    const first = await until('the receiver got it once', () => rx.accepted.find((r) => r.dataId === id));
    worker = await startWorker(['webhook-first-attempts:before-record=kill']);
    // The claim's lease passes (2 × 1 s timeout + 2 s), the event is claimed again and sent again.
    await until('sent again after the lease', () => rx.accepted.filter((r) => r.id === first.id).length >= 2, 90_000);
    const log = await until('the attempt recorded', async () => {
      const l = await deliveryLog(s.token, endpoint.id);
      return l.some((d) => d.succeeded) && l;
    });
    expect(log.find((d) => d.succeeded)!.webhook_event).toMatchObject({ id: first.id, succeeded: true });
  }, 150_000);

  it('reports on /healthz the events nothing picked up for 5 minutes, and 0 once the dispatcher ran', async () => {
    const s = await seller(srv.url, SCOPES);
    const { rx } = await endpointFor(s.token, ['product.created']);
    // No worker runs yet: the product's event waits in the outbox. Age it past the 5-minute mark.
    const [id] = await createProducts(s.token, ['Forgotten']);
    await srv.deps.orm.em.getConnection().execute(`update outbox_events set created_at = now() - interval '10 minutes' where data->>'id' = ?`, [id]);
    const health = async () => (await json(await fetch(`${srv.url}/healthz`))).webhooks;
    expect(await health()).toEqual({ undispatched_events: 1, unattempted_deliveries: 0 });
    worker = await startWorker();
    await until('the old event delivered', () => rx.accepted.find((r) => r.dataId === id), 90_000);
    expect(await health()).toEqual({ undispatched_events: 0, unattempted_deliveries: 0 });
  }, 120_000);

  it('delivers 300 events to each of two endpoints, every signature valid', async () => {
    worker = await startWorker();
    const s = await seller(srv.url, SCOPES);
    const a = await endpointFor(s.token, ['customer.created']);
    const b = await endpointFor(s.token, ['customer.created']);
    const customerIds: string[] = [];
    for (let batch = 0; batch < 15; batch++) {
      const created = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const res = await bearer(srv.url, s.token).post('/v1/customers/', { email: `soak-${batch}-${i}-${Date.now()}@example.com` });
          expect(res.status).toBe(201);
          return (await json(res)).id as string;
        }),
      );
      customerIds.push(...created);
    }
    for (const { rx } of [a, b]) {
      await until(`300 events at ${rx.url}`, () => new Set(rx.accepted.map((r) => r.dataId)).size >= 300, 120_000);
      expect(new Set(rx.accepted.map((r) => r.dataId))).toEqual(new Set(customerIds));
      expect(rx.accepted.every((r) => r.type === 'customer.created')).toBe(true);
      expect(rx.rejected).toEqual([]);
    }
    // One webhook-id per event and endpoint.
    expect(a.rx.acceptedIds().size).toBe(300);
    expect(b.rx.acceptedIds().size).toBe(300);
    expect([...a.rx.acceptedIds()].some((id) => b.rx.acceptedIds().has(id))).toBe(false);
  }, 240_000);

  it('delivers every event created while the receiver answered 503 for 15 s, and the log shows the failure before the success', async () => {
    worker = await startWorker();
    const s = await seller(srv.url, SCOPES);
    let downUntil = 0;
    // Every event's first attempt meets the outage, also one sent after the clock's 15 s (a busy worker).
    const { rx, endpoint } = await endpointFor(s.token, ['product.created'], (_id, n) => (n === 1 || Date.now() < downUntil ? 503 : 202));
    downUntil = Date.now() + 15_000;
    const ids: string[] = [];
    while (Date.now() < downUntil - 1_000) {
      ids.push(...(await createProducts(s.token, [`During outage ${ids.length}`])));
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(ids.length).toBeGreaterThan(10);
    await until('every event of the outage delivered', () => ids.every((id) => rx.accepted.some((r) => r.dataId === id)), 120_000);
    const log = await until('every success recorded', async () => {
      const l = await deliveryLog(s.token, endpoint.id);
      return l.filter((d) => d.succeeded).length >= ids.length && l;
    });
    const byEvent = new Map<string, typeof log>();
    for (const d of log) byEvent.set(d.webhook_event.id, [...(byEvent.get(d.webhook_event.id) ?? []), d]);
    expect(byEvent.size).toBe(ids.length);
    for (const attempts of byEvent.values()) {
      const ordered = attempts.sort((x, y) => x.attempt - y.attempt);
      expect(ordered[0]!.http_code).toBe(503);
      expect(ordered.at(-1)!.http_code).toBe(202);
      expect(ordered.filter((d) => d.succeeded)).toHaveLength(1);
      expect(new Date(ordered[0]!.created_at).getTime()).toBeLessThan(new Date(ordered.at(-1)!.created_at).getTime());
    }
  }, 240_000);
});
