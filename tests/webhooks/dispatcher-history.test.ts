/**
 * The outbox dispatcher's history stays short: a run continues as new once its history reaches its
 * limit (`historyLimit`, or Temporal's `continueAsNewSuggested`), so a worker that starts cold replays
 * at most that much before its first workflow task. Runs recorded before the limit existed (fixture:
 * `dispatcher-before-history-limit.json`, a dispatcher that fanned out and delivered events and was
 * woken between them) must replay on the current code. `RECORD_DISPATCHER_HISTORY=1` records it
 * again (only with that older code).
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { outboxDispatcherWorkflowId } from '../../workflows/src/ids.ts';
import { DISPATCHER_HISTORY_LIMIT } from '../../workflows/src/webhooks/outbox-dispatcher.workflow.ts';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { bearer, receiver, until, type Receiver } from './receiver.ts';

const FIXTURE = path.join(import.meta.dirname, 'fixtures', 'dispatcher-before-history-limit.json');
const SCOPES = ['products:read', 'products:write', 'webhooks:read', 'webhooks:write'];

let srv: TestServer;
let rx: Receiver;
let token: string;
beforeAll(async () => {
  srv = await startTestServer();
  token = (await seller(srv.url, SCOPES)).token;
  let secret = '';
  rx = await receiver(() => secret);
  const res = await bearer(srv.url, token).post('/v1/webhooks/endpoints', { url: rx.url, events: ['product.created'] });
  expect(res.status).toBe(201);
  secret = (await json(res)).secret;
});
afterAll(async () => {
  await rx?.close();
  await srv?.close();
});

/** Creates products one by one and waits until the receiver accepted their `product.created`. */
async function productsDelivered(n: number): Promise<void> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await bearer(srv.url, token).post('/v1/products/', { name: `P ${randomUUID().slice(0, 6)}`, prices: [{ amount_type: 'fixed', price_amount: 900 }] });
    expect(res.status).toBe(201);
    ids.push((await json(res)).id);
    await new Promise((r) => setTimeout(r, 350));
  }
  await until('delivered', () => ids.every((id) => rx.accepted.some((a) => a.dataId === id)));
}

const dispatcher = () => srv.deps.temporal.workflow.getHandle(outboxDispatcherWorkflowId(srv.deps.cfg.TEMPORAL_TASK_QUEUE));

describe.runIf(process.env.RECORD_DISPATCHER_HISTORY === '1')('recording', () => {
  it('records a dispatcher that fanned out and delivered events between wake-ups', { timeout: 300_000 }, async () => {
    await productsDelivered(70);
    const history = await dispatcher().fetchHistory();
    mkdirSync(path.dirname(FIXTURE), { recursive: true });
    // The proto's own JSON (enum names, base64 payloads), as `temporal workflow show --output json` writes it.
    writeFileSync(FIXTURE, JSON.stringify(history, null, 1));
  });
});

describe('the outbox dispatcher', () => {
  it('replays a run recorded before its history was bounded', async () => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(FIXTURE, 'utf8')));
    const signals = history.events.filter((e) => e.workflowExecutionSignaledEventAttributes);
    const markers = history.events.filter((e) => e.markerRecordedEventAttributes?.markerName === 'core_local_activity');
    expect(signals.length).toBeGreaterThan(2);
    expect(markers.length).toBeGreaterThan(4);
    // Longer than a run may grow now: the current code without its patch would continue as new early.
    expect(history.events.length).toBeGreaterThan(DISPATCHER_HISTORY_LIMIT);
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, 'dispatcher-replay');
  });

  it('continues as new once its history reaches the limit, and still delivers every event', async () => {
    const id = `webhook-dispatcher-bounded-${randomUUID().slice(0, 8)}`;
    const limit = 60;
    const handle = await srv.deps.temporal.workflow.start('outboxDispatcherWorkflow', {
      workflowId: id,
      taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE,
      args: [{ idleSeconds: 1, historyLimit: limit }],
    });
    try {
      // Wake it until its first run has continued as new.
      const first = await until('continued as new', async () => {
        await handle.signal('wake');
        const events = (await srv.deps.temporal.workflow.getHandle(id, handle.firstExecutionRunId).fetchHistory()).events ?? [];
        return events.some((e) => e.workflowExecutionContinuedAsNewEventAttributes) ? events : undefined;
      });
      // The run ended at its limit (plus the last iteration's events and the continue-as-new itself).
      expect(first.length).toBeGreaterThanOrEqual(limit);
      expect(first.length).toBeLessThan(limit + 25);
      expect((await srv.deps.temporal.workflow.getHandle(id).describe()).runId).not.toBe(handle.firstExecutionRunId);
      await productsDelivered(2);
    } finally {
      await handle.terminate('test done').catch(() => {}); // ignore: it may have ended already
    }
  });
});
