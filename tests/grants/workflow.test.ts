/**
 * The benefit-grant workflow alone, on the development Temporal server with recording activities:
 * requests arriving while it works, while it completes and after it closed are all applied, in the
 * order they were sent, across continue-as-new; a request whose retries are exhausted does not block
 * the next ones.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { benefitGrantWorkflowId } from '../../workflows/src/ids.ts';
import type { BenefitActionInput } from '../../api/src/modules/benefits/grant-actions.ts';
import { BENEFIT_ACTION_SIGNAL, BENEFIT_GRANT_WORKFLOW, type BenefitActionRequest } from '../../api/src/modules/benefits/lifecycle.ts';
import { testConfig } from '../harness.ts';

const cfg = testConfig();
const taskQueue = `grants-wf-${randomUUID()}`;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const applied: BenefitActionInput[] = [];
/** orderId → attempts to fail before succeeding (Infinity: always). */
const failures = new Map<string, number>();
/** benefitId → a promise its actions wait for before they apply (holds a run busy while requests queue up). */
const gates = new Map<string, Promise<void>>();

beforeAll(async () => {
  client = new Client({ connection: await Connection.connect({ address: cfg.TEMPORAL_ADDRESS }), namespace: cfg.TEMPORAL_NAMESPACE });
  worker = await Worker.create({
    connection: await NativeConnection.connect({ address: cfg.TEMPORAL_ADDRESS }),
    namespace: cfg.TEMPORAL_NAMESPACE,
    taskQueue,
    workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
    activities: {
      async applyBenefitAction(input: BenefitActionInput) {
        const left = failures.get(input.orderId ?? '') ?? 0;
        if (left > 0) {
          failures.set(input.orderId ?? '', left - 1);
          throw new Error('third party down');
        }
        await gates.get(input.benefitId);
        await new Promise((r) => setTimeout(r, 5 + Math.random() * 20));
        applied.push(input);
        return { status: 'granted', grantId: null };
      },
    },
  });
  running = worker.run();
});
afterAll(async () => {
  worker?.shutdown();
  await running;
  await client?.connection.close();
});

function send(benefitId: string, customerId: string, request: BenefitActionRequest, maxPerRun?: number) {
  return client.workflow.signalWithStart(BENEFIT_GRANT_WORKFLOW, {
    workflowId: benefitGrantWorkflowId(benefitId, customerId),
    taskQueue,
    args: [{ benefitId, customerId, ...(maxPerRun ? { maxPerRun } : {}) }],
    signal: BENEFIT_ACTION_SIGNAL,
    signalArgs: [request],
  });
}

const req = (i: number): BenefitActionRequest => ({ action: i % 2 ? 'revoke' : 'grant', subscriptionId: null, orderId: `order-${i}` });

async function until(fn: () => boolean, ms = 150_000) {
  const end = Date.now() + ms;
  while (!fn()) {
    if (Date.now() > end) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('benefit-grant workflow', () => {
  it('applies every request in order, including ones sent while it completes or after it closed', async () => {
    const benefitId = randomUUID();
    const customerId = randomUUID();
    const mine = () => applied.filter((a) => a.benefitId === benefitId);
    for (let i = 0; i < 8; i++) {
      await send(benefitId, customerId, req(i));
      // Now and then wait for the run to finish, so the next request starts a new run.
      if (i % 4 === 3) await until(() => mine().length === i + 1);
    }
    await until(() => mine().length === 8);
    expect(mine().map((a) => a.orderId)).toEqual(Array.from({ length: 8 }, (_, i) => `order-${i}`));
    expect(mine().every((a) => a.customerId === customerId)).toBe(true);
    expect(mine().map((a) => a.action)).toEqual(Array.from({ length: 8 }, (_, i) => (i % 2 ? 'revoke' : 'grant')));
  }, 180_000);

  it('carries the queue over continue-as-new', async () => {
    const benefitId = randomUUID();
    const customerId = randomUUID();
    const mine = () => applied.filter((a) => a.benefitId === benefitId);
    // The first run stays busy on its first request until every request has been sent, so it has a
    // queue to carry each time it reaches maxPerRun (2).
    let open!: () => void;
    gates.set(benefitId, new Promise<void>((r) => (open = r)));
    const sent = await Promise.all(Array.from({ length: 3 }, (_, i) => send(benefitId, customerId, req(i), 2)));
    for (let i = 3; i < 9; i++) await send(benefitId, customerId, req(i), 2);
    open();
    await until(() => mine().length === 9);
    // The first three raced each other; from the fourth on the order is the sending order.
    expect(mine().slice(3).map((a) => a.orderId)).toEqual(Array.from({ length: 6 }, (_, i) => `order-${i + 3}`));
    expect(new Set(mine().map((a) => a.orderId)).size).toBe(9);

    // Every request went to one run, which continued as new (a new run id) with the rest of the queue
    // as its input, run after run, until the last run completed.
    const firstRunId = sent[0]!.signaledRunId;
    expect(new Set(sent.map((h) => h.signaledRunId))).toEqual(new Set([firstRunId]));
    const carried: number[] = [];
    let runId = firstRunId;
    for (;;) {
      const handle = client.workflow.getHandle(benefitGrantWorkflowId(benefitId, customerId), runId);
      await handle.result().catch(() => {});
      const { status } = await handle.describe();
      if (status.name !== 'CONTINUED_AS_NEW') {
        expect(status.name).toBe('COMPLETED');
        break;
      }
      const history = await handle.fetchHistory();
      const attrs = history.events!.at(-1)!.workflowExecutionContinuedAsNewEventAttributes;
      expect(attrs?.newExecutionRunId).toBeTruthy();
      expect(attrs!.newExecutionRunId).not.toBe(runId);
      const input = JSON.parse(Buffer.from(attrs!.input!.payloads![0]!.data!).toString()) as { pending: BenefitActionRequest[] };
      carried.push(input.pending.length);
      runId = attrs!.newExecutionRunId!;
    }
    // 9 requests, 2 per run: 4 continue-as-new, carrying 7, 5, 3 and 1 requests.
    expect(carried).toEqual([7, 5, 3, 1]);
  }, 180_000);

  it('retries a failing request before moving on to the next', async () => {
    const benefitId = randomUUID();
    const customerId = randomUUID();
    const mine = () => applied.filter((a) => a.benefitId === benefitId);
    const first = { action: 'grant' as const, subscriptionId: null, orderId: `flaky-${benefitId}` };
    failures.set(first.orderId, 2);
    await send(benefitId, customerId, first);
    await send(benefitId, customerId, { action: 'revoke', subscriptionId: null, orderId: `after-${benefitId}` });
    await until(() => mine().length === 2);
    expect(mine().map((a) => a.action)).toEqual(['grant', 'revoke']);
    expect(failures.get(first.orderId)).toBe(0);
  }, 180_000);
});
