/**
 * The worker killed (SIGKILL, as a crash or an OOM kill would) mid-refund and mid-renewal: right
 * after the payment processor refunded or charged, before the worker recorded the outcome. The
 * worker runs as its own OS process (tests/crash/worker-process.ts) carrying test-only fault points
 * (workers/src/fault-injection.ts, `processor.*:after`); each fires once, and the restarted worker
 * finishes the work. Exactly one refund reaches the processor and the order is refunded once;
 * exactly one renewal order is created and charged once, and the period moves on once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL, subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../catalogue/helpers-c.ts';
import { buy, call, fixed, refundSeller, until, type Seller } from '../refunds/helpers.ts';
import { startWorkerProcess, waitForExit, type WorkerProcess } from '../crash/worker-process.ts';

let srv: TestServer;
let s: Seller;
let taskQueue: string;
let stateDir: string;
let worker: WorkerProcess | undefined;
const FAULTS = ['processor.refund:after', 'processor.chargeOffSession:after'];

const start = () => startWorkerProcess({ databaseUrl: srv.databaseUrl, taskQueue, faults: FAULTS, faultStateDir: stateDir });

beforeAll(async () => {
  taskQueue = `faults-kill-${randomUUID()}`;
  // The API in this process; the worker is the separate process above.
  srv = await startTestServer({ worker: false, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'emporia-worker-kill-'));
  s = await refundSeller(srv);
  worker = await start();
}, 240_000);

afterAll(async () => {
  await worker?.stop(5_000);
  await srv?.close();
  rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

async function sql<T>(query: string, params: unknown[] = []): Promise<T[]> {
  return srv.deps.orm.em.fork().execute<T[]>(query, params);
}

describe('worker killed mid-refund and mid-renewal', () => {
  it('ends with exactly one refund and one renewal charge once a new worker takes over', { timeout: 240_000 }, async () => {
    const oneTime = await createProduct(srv.url, s.token, { name: 'Desktop app', prices: fixed(2500) });
    const monthly = await createProduct(srv.url, s.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(1900) });
    const order = await buy(srv, s, oneTime.id);
    const first = await buy(srv, s, monthly.id);
    const subscriptionId = first.subscription_id as string;
    expect(subscriptionId).toBeTruthy();

    // Mid-refund: the processor refunds, the worker dies before recording it.
    const refund = await call(srv.url, s.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'customer_request', amount: 2500 });
    expect(refund.status, JSON.stringify(refund.body)).toBe(201);
    expect((await waitForExit(worker!)).signal).toBe('SIGKILL');
    worker = await start();

    // Mid-renewal: the period ends now; the worker charges the renewal order and dies before recording it.
    const em = srv.deps.orm.em.fork();
    const periodEnd = new Date(Date.now() + 1000);
    await em.nativeUpdate(Subscription, { id: subscriptionId }, { currentPeriodEnd: periodEnd });
    await srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).signal(SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL);
    expect((await waitForExit(worker!)).signal).toBe('SIGKILL');
    worker = await start();

    // The renewal: one cycle order, paid, charged once; the period moved on once.
    const cycle = await until(async () => {
      const r = await call(srv.url, s.token, 'GET', `/v1/orders/?subscription_id=${subscriptionId}&limit=100`);
      const paid = r.status === 200 && r.body.items.filter((o: { billing_reason: string; status: string }) => o.billing_reason === 'subscription_cycle' && o.status === 'paid');
      return paid && paid.length > 0 && r.body.items.filter((o: { billing_reason: string }) => o.billing_reason === 'subscription_cycle');
    }, 120_000);
    expect(cycle).toHaveLength(1);
    const charges = await sql<{ n: string }>(`select count(*) as n from sandbox_charges where metadata->>'subscription_id' = ?`, [subscriptionId]);
    expect(Number(charges[0]?.n)).toBe(1);
    const sub = await call(srv.url, s.token, 'GET', `/v1/subscriptions/${subscriptionId}`);
    expect(sub.status).toBe(200);
    expect(sub.body.status).toBe('active');
    expect(new Date(sub.body.current_period_start).getTime()).toBe(periodEnd.getTime());

    // The refund: succeeded, the order refunded in full once, one refund at the processor.
    const settled = await until(async () => {
      const r = await call(srv.url, s.token, 'GET', `/v1/orders/${order.id}`);
      return r.status === 200 && r.body.status === 'refunded' && r.body;
    }, 120_000);
    expect(settled.refunded_amount).toBe(2500);
    const refunds = await call(srv.url, s.token, 'GET', `/v1/refunds/?order_id=${order.id}`);
    expect(refunds.body.items.map((r: { status: string; amount: number }) => [r.status, r.amount])).toEqual([['succeeded', 2500]]);
    const atProcessor = await sql<{ n: string; refunded: number }>(
      `select count(r.*) as n, max(c.refunded_amount) as refunded from sandbox_refunds r join sandbox_charges c on c.id = r.charge_id
       where r.charge_id = (select charge_id from sandbox_refunds where idempotency_key = ?)`,
      [`refund:${refund.body.id}`],
    );
    expect([Number(atProcessor[0]?.n), Number(atProcessor[0]?.refunded)]).toEqual([1, 2500]);
  });
});
