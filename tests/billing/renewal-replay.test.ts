/**
 * Subscription runs already under way on a deployed stack must replay on the current workflow code.
 * The fixtures are histories recorded from the workflow as it was before renewals stayed in one run
 * (every paid period continued as new): a paid renewal that continued as new, the next run canceled at
 * period end, and a declined renewal dunned to `unpaid`. `RECORD_RENEWAL_HISTORY=1` records them
 * again (only with that older code). Replaying answers a nondeterminism error if the current code
 * issues other commands for the same history.
 */
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { SUBSCRIPTION_UPDATES, subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import { addMonths } from '../../api/src/modules/pricing/index.ts';
import { envNow, ordersOf, seedSubscription, skipTo, startLifecycle, startWorkflow, subscriptionRow, until, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';

const FIXTURES = path.join(import.meta.dirname, 'fixtures');
const NAMES = ['renewal-paid-continued', 'renewal-next-run-canceled', 'renewal-declined-unpaid'] as const;
const DAY = 86_400_000;

describe.runIf(process.env.RECORD_RENEWAL_HISTORY === '1')('recording', () => {
  let lc: Lifecycle;
  let running: Promise<void>;
  beforeAll(async () => {
    lc = await startLifecycle();
    running = lc.worker.run();
  });
  afterAll(async () => {
    lc?.worker.shutdown();
    await running;
    await lc?.close();
  });

  async function save(name: string, workflowId: string, runId: string) {
    const history = await lc.env.client.workflow.getHandle(workflowId, runId).fetchHistory();
    mkdirSync(FIXTURES, { recursive: true });
    // The proto's own JSON (enum names, base64 payloads), as `temporal workflow show --output json` writes it.
    writeFileSync(path.join(FIXTURES, `${name}.json`), JSON.stringify(history, null, 1));
  }

  it('records a paid renewal and the next run canceled at period end', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1500 });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await skipTo(lc, addMonths(start, 1));
    await until(async () => (await ordersOf(lc, s.subscriptionId)).filter((o) => o.status === 'paid').length === 1);
    const desc = await until(async () => {
      const d = await lc.env.client.workflow.getHandle(handle.workflowId).describe();
      return d.runId !== handle.firstExecutionRunId ? d : null;
    });
    await lc.env.client.workflow.getHandle(handle.workflowId).executeUpdate(SUBSCRIPTION_UPDATES.cancel, { args: [{ reason: 'too_expensive' }] });
    await skipTo(lc, addMonths(start, 2));
    await until(async () => (await subscriptionRow(lc, s.subscriptionId)).status === 'canceled');
    await lc.env.client.workflow.getHandle(handle.workflowId).result();
    await save('renewal-paid-continued', handle.workflowId, handle.firstExecutionRunId);
    await save('renewal-next-run-canceled', handle.workflowId, desc.runId);
  });

  it('records a declined renewal dunned to unpaid', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 2500, token: 'tok_chargeCustomerFail' });
    const handle = await startWorkflow(lc, s.subscriptionId, [DAY, 2 * DAY]);
    await skipTo(lc, new Date(addMonths(start, 1).getTime() + 4 * DAY));
    await until(async () => (await subscriptionRow(lc, s.subscriptionId)).status === 'unpaid');
    await handle.result();
    expect(subscriptionWorkflowId(s.subscriptionId)).toBe(handle.workflowId);
    await save('renewal-declined-unpaid', handle.workflowId, handle.firstExecutionRunId);
  });
});

describe('runs recorded before renewals stayed in one run', () => {
  it.each(NAMES)('%s replays on the current workflow code', async (name) => {
    const history = temporal.api.history.v1.History.fromObject(JSON.parse(readFileSync(path.join(FIXTURES, `${name}.json`), 'utf8')));
    expect(history.events.length).toBeGreaterThan(5);
    await Worker.runReplayHistory({ workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! } }, history, `subscription-replay-${name}`);
  });
});

describe('renewals in one run', () => {
  let lc: Lifecycle;
  let running: Promise<void>;
  beforeAll(async () => {
    lc = await startLifecycle();
    running = lc.worker.run();
  });
  afterAll(async () => {
    lc?.worker.shutdown();
    await running;
    await lc?.close();
  });

  it('renews three periods in the run that started, one renewal local activity and one timer a period', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1200 });
    const handle = await startWorkflow(lc, s.subscriptionId);
    for (let k = 1; k <= 3; k++) {
      await skipTo(lc, addMonths(start, k));
      await until(async () => (await ordersOf(lc, s.subscriptionId)).filter((o) => o.status === 'paid').length === k);
    }
    const orders = await ordersOf(lc, s.subscriptionId);
    expect(orders.map((o) => [o.billingReason, o.status, o.totalAmount])).toEqual(Array(3).fill(['subscription_cycle', 'paid', 1200]));
    const row = await subscriptionRow(lc, s.subscriptionId);
    expect(row.currentPeriodEnd!.toISOString()).toBe(addMonths(start, 4).toISOString());
    // The fourth period's timer is started in the same run: wait for it before reading the history.
    const events = await until(async () => {
      const h = await lc.env.client.workflow.getHandle(handle.workflowId).fetchHistory();
      const evs = h.events ?? [];
      return evs.filter((e) => e.timerStartedEventAttributes).length === 4 ? evs : null;
    });
    expect((await lc.env.client.workflow.getHandle(handle.workflowId).describe()).runId).toBe(handle.firstExecutionRunId);
    expect(events.filter((e) => e.workflowExecutionContinuedAsNewEventAttributes)).toHaveLength(0);
    const localActivities = events
      .map((e) => e.markerRecordedEventAttributes)
      .filter((m) => m?.markerName === 'core_local_activity')
      .map((m) => JSON.parse(Buffer.from(m!.details!.data!.payloads![0]!.data!).toString()).activity_type as string);
    // The schedule is read once, at the run's start; each renewal answers the next period's end.
    expect(localActivities).toEqual(['subscriptionSchedule', 'renewAndCharge', 'renewAndCharge', 'renewAndCharge']);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toHaveLength(3);
    // Benefits are granted again for every paid cycle.
    expect(lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => [c.action, c.scope.orderId])).toEqual(
      orders.map((o) => ['grant', o.id]),
    );
  });
});
