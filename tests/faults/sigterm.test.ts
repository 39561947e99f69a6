/**
 * SIGTERM drains before exit. The API (`api/src/server.ts` as its own process): a request in flight
 * when the signal arrives completes and is saved, a new connection is refused, and the process exits
 * 0. The worker (`workers/src/main.ts` as its own process): an activity running when the signal
 * arrives (a slow refund at the processor, test-only delay point) finishes and its result is recorded
 * by that worker (one attempt, completed, no retry), and the process exits 0.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import pg from 'pg';
import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundWorkflowId } from '../../workflows/src/ids.ts';
import { createTestDatabase, startTestServer, type TestServer } from '../harness.ts';
import { dropDatabase } from '../../infra/src/services.ts';
import { createProduct } from '../catalogue/helpers-c.ts';
import { buy, call, fixed, refundSeller, until, type Seller } from '../refunds/helpers.ts';
import { startWorkerProcess, type WorkerProcess } from '../crash/worker-process.ts';
import { ROOT, freePort } from './processes.ts';

let srv: TestServer;
let s: Seller;
let taskQueue: string;
let stateDir: string;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  taskQueue = `faults-sigterm-${randomUUID()}`;
  srv = await startTestServer({ worker: false, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'emporia-sigterm-'));
  s = await refundSeller(srv);
}, 240_000);

afterAll(async () => {
  for (const w of workers) await w.stop(5_000);
  await srv?.close();
  rmSync(stateDir, { recursive: true, force: true });
}, 60_000);

/** POST with a body sent in two halves, so the request is in flight until `finish()` is called. */
function slowPost(port: number, pathName: string, body: string) {
  const req = http.request({ host: '127.0.0.1', port, path: pathName, method: 'POST', agent: false, headers: {
    'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
  } });
  const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
  });
  const half = Math.floor(body.length / 2);
  const sent = new Promise<void>((resolve) => req.write(body.slice(0, half), () => resolve()));
  return { answer, sent, finish: () => req.end(body.slice(half)) };
}

function connects(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('connected');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
}

describe('SIGTERM', () => {
  it('lets the API finish the requests in flight, refuse new connections and exit 0', { timeout: 120_000 }, async () => {
    const databaseUrl = await createTestDatabase();
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'api/src/server.ts'], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'info' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
    try {
      await until(async () => out.includes('api listening'), 60_000);
      const email = `drain-${randomUUID().slice(0, 8)}@example.com`;
      const inFlight = slowPost(port, '/api/auth/sign-up/email', JSON.stringify({ email, password: 'correct horse battery', name: 'Drain' }));
      // Its headers and half its body are on the wire (and, a moment later, read by the server) before the signal.
      await inFlight.sent;
      await new Promise((r) => setTimeout(r, 500));
      child.kill('SIGTERM');
      // The listener closes: new connections are refused while the request is still in flight ...
      await until(async () => (await connects(port)) === 'ECONNREFUSED', 30_000);
      // ... and stays in flight for a while (longer than a fixed 5 s exit would allow) before it ends.
      await new Promise((r) => setTimeout(r, 6_000));
      expect(child.exitCode).toBeNull();
      inFlight.finish();
      const answer = await inFlight.answer;
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body).user.email).toBe(email);
      expect(await exited).toEqual({ code: 0, signal: null });
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      try {
        expect((await db.query('select email from users where email = $1', [email])).rows).toEqual([{ email }]);
      } finally {
        await db.end();
      }
    } finally {
      child.kill('SIGKILL');
      await dropDatabase(databaseUrl).catch(() => {});
    }
  });

  it('lets the worker finish its running activities and exit 0', { timeout: 180_000 }, async () => {
    const start = (faults: string[]) =>
      startWorkerProcess({ databaseUrl: srv.databaseUrl, taskQueue, faults, faultStateDir: stateDir }).then((w) => (workers.push(w), w));
    const first = await start(['processor.refund:before=delay-4000']);
    const product = await createProduct(srv.url, s.token, { name: 'Drained', prices: fixed(1200) });
    const order = await buy(srv, s, product.id);
    const refund = await call(srv.url, s.token, 'POST', '/v1/refunds/', { order_id: order.id, reason: 'customer_request', amount: 1200 });
    expect(refund.status, JSON.stringify(refund.body)).toBe(201);
    const handle = srv.deps.temporal.workflow.getHandle(refundWorkflowId(refund.body.id));
    // The refund at the processor is running on the first worker (held 4 s by the delay point).
    await until(async () => {
      const d = await handle.describe().catch(() => null);
      return d?.raw.pendingActivities?.some((a) => a.activityType?.name === 'refundAtProcessorStep' && a.attempt === 1 && String(a.state) !== '1' && a.lastWorkerIdentity);
    }, 60_000);
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });

    // The activity it was running completed on it, first attempt, no retry; a new worker finishes the refund.
    await start([]);
    await until(async () => {
      const r = await call(srv.url, s.token, 'GET', `/v1/orders/${order.id}`);
      return r.body.status === 'refunded';
    }, 90_000);
    const history = await handle.fetchHistory();
    const steps = (history.events ?? []).filter(
      (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'refundAtProcessorStep',
    );
    expect(steps).toHaveLength(1);
    const scheduledId = Number(steps[0]!.eventId);
    const outcome = (history.events ?? []).filter((e) => {
      const a = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes ?? e.activityTaskCanceledEventAttributes;
      return a && Number(a.scheduledEventId) === scheduledId;
    });
    expect(outcome.map((e) => String(e.eventType))).toEqual([expect.stringMatching(/COMPLETED|^12$/)]);
    const started = (history.events ?? []).find((e) => Number(e.activityTaskStartedEventAttributes?.scheduledEventId) === scheduledId);
    expect(started?.activityTaskStartedEventAttributes?.attempt).toBe(1);
    expect(started?.activityTaskStartedEventAttributes?.identity).toContain(String(first.child.pid));
  });
});
