/**
 * Crash tests of the purchase path (issue #5). The worker runs as its own OS process; test-only
 * faults (workers/src/fault-injection.ts) SIGKILL it at chosen points of the checkout-confirm
 * workflow, one checkout per point, and the test starts it again each time. However often it dies,
 * every purchase ends with exactly one order, one subscription (recurring), one granted grant per
 * benefit, one charge, and the checkout `succeeded`. A fulfilment that fails for good is compensated: the
 * charge refunded, the discount redemption released, the checkout back to `open`; a step after the
 * fulfilment committed is retried instead (the sale stands, nothing refunded). A confirmation
 * whose workflow start never happened (the API died after commit) is picked up by the worker.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConfirmWorkflowId, outboxDispatcherWorkflowId } from '../../workflows/src/ids.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { checkoutConfirmSchema, confirmCheckout } from '../../api/src/modules/checkouts/confirm.ts';
import { startWorkflow, WorkflowStart } from '../../api/src/kit/workflow-starts.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, newCheckout, type Seller } from '../confirm/helpers.ts';
import { checkoutReaches, outcomeOf, settledOutcome } from './outcomes.ts';
import { startWorkerProcess, waitForExit, type WorkerProcess } from './worker-process.ts';

let srv: TestServer;
let s: Seller;
let taskQueue: string;
let stateDir: string;
let worker: WorkerProcess | undefined;
let benefitId: string;
let oneTime: string;
let monthly: string;
/** The crash points, one checkout each (created up front, so every worker carries the whole fault list). */
let crashes: { point: string; recurring: boolean; github: boolean; checkout: { id: string; client_secret: string } }[];
let githubBenefitId: string;
/** A one-time product with the license key and a GitHub repository benefit. */
let withGitHub: string;
/** A checkout whose fulfilment fails for good, and its discount (max_redemptions 1). */
let doomed: { id: string; client_secret: string };
let discountId: string;
/** Checkouts whose step after the committed fulfilment fails for good once (the sale must stand). */
let afterSale: { point: string; checkout: { id: string; client_secret: string } }[];
let faults: string[];

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;
const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

beforeAll(async () => {
  taskQueue = `crash-${randomUUID()}`;
  // The API in this process; no in-process worker: the worker is the separate process below.
  srv = await startTestServer({ worker: false, env: { TEMPORAL_TASK_QUEUE: taskQueue } });
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'emporia-faults-'));
  s = await confirmSeller(srv);
  const benefit = await call(srv.url, s.token, 'POST', '/v1/benefits/', {
    type: 'license_keys',
    description: 'License',
    properties: { prefix: 'crash', limit_usage: 3 },
  });
  expect(benefit.status).toBe(201);
  benefitId = benefit.body.id;
  oneTime = (await createProduct(srv.url, s.token, { name: 'Desktop app', prices: fixed(2500) })).id;
  monthly = (await createProduct(srv.url, s.token, { name: 'Pro', recurring_interval: 'month', prices: fixed(1900) })).id;
  // A GitHub benefit is granted through its own workflow, after the fulfilment transaction (no
  // GitHub account chosen yet, so its grant stays pending and GitHub is never called).
  const github = await call(srv.url, s.token, 'POST', '/v1/benefits/', {
    type: 'github_repository',
    description: 'Source access',
    properties: { repository_owner: 'acme', repository_name: 'engine', permission: 'pull' },
  });
  expect(github.status, JSON.stringify(github.body)).toBe(201);
  githubBenefitId = github.body.id;
  withGitHub = (await createProduct(srv.url, s.token, { name: 'Source licence', prices: fixed(9900) })).id;
  for (const [id, benefits] of [[oneTime, [benefitId]], [monthly, [benefitId]], [withGitHub, [benefitId, githubBenefitId]]] as const) {
    expect((await call(srv.url, s.token, 'POST', `/v1/products/${id}/benefits`, { benefits })).status).toBe(200);
  }
  // Inside the fulfilment transaction (nothing committed yet) and right after its commit, for a
  // recurring and a one-time purchase each; and, for a product with a GitHub benefit, after its grant
  // was requested and after the checkout was marked succeeded.
  const points = [
    { point: 'fulfilStep:before-commit', recurring: true, github: false },
    { point: 'fulfilStep:after-commit', recurring: true, github: false },
    { point: 'fulfilStep:before-commit', recurring: false, github: false },
    { point: 'fulfilStep:after-commit', recurring: false, github: true },
    { point: 'requestGrantsStep:after-commit', recurring: false, github: true },
    { point: 'markSucceededStep:after-commit', recurring: false, github: true },
  ];
  crashes = [];
  for (const p of points) crashes.push({ ...p, checkout: await newCheckout(srv, s, p.github ? withGitHub : p.recurring ? monthly : oneTime) });
  const discount = await call(srv.url, s.token, 'POST', '/v1/discounts/', {
    name: 'Launch',
    type: 'percentage',
    basis_points: 2000,
    duration: 'once',
    max_redemptions: 1,
  });
  expect(discount.status).toBe(201);
  discountId = discount.body.id;
  doomed = await newCheckout(srv, s, oneTime, { discount_id: discountId });
  afterSale = [];
  for (const point of ['requestGrantsStep:before', 'markSucceededStep:before']) afterSale.push({ point, checkout: await newCheckout(srv, s, withGitHub) });
  // Each fault fires once (a marker in stateDir), so a restarted worker recovers instead of dying again.
  faults = [
    ...crashes.map((c) => `${c.point}@${c.checkout.id}=kill`),
    `fulfilStep:before-commit@${doomed.id}=fail`,
    ...afterSale.map((c) => `${c.point}@${c.checkout.id}=fail`),
  ];
});

afterAll(async () => {
  await worker?.stop();
  await srv?.deps.temporal.workflow
    .getHandle(outboxDispatcherWorkflowId(taskQueue))
    .terminate('test finished')
    .catch(() => {});
  await srv?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** The event types (and failure messages) of a checkout's fulfilment workflow, for failure messages. */
async function historySummary(checkoutId: string): Promise<string> {
  try {
    const history = await srv.deps.temporal.workflow.getHandle(checkoutConfirmWorkflowId(checkoutId)).fetchHistory();
    return JSON.stringify(
      (history.events ?? []).map((e) => [
        e.eventType,
        e.activityTaskFailedEventAttributes?.failure?.message ?? e.workflowTaskFailedEventAttributes?.failure?.message ?? undefined,
      ]),
    );
  } catch (err) {
    return String(err);
  }
}

const startWorker = () => startWorkerProcess({ databaseUrl: srv.databaseUrl, taskQueue, faults, faultStateDir: stateDir });

describe('the worker killed during checkout fulfilment', () => {
  // Each restart of the worker process loads the whole app (about 10 s on a busy 2-core machine).
  it('still gives exactly one order, subscription, grant and charge per purchase after each restart', { timeout: 300_000 }, async () => {
    worker = await startWorker();
    for (const { point, checkout } of crashes) {
      const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('crash')), confirmation_token_id: 'tok_visa' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const exit = await waitForExit(worker, 120_000).catch(async (err: unknown) => {
        throw new Error(`${point}: ${String(err)}\nworkflow history: ${await historySummary(checkout.id)}`);
      });
      expect(exit.signal, `worker should die at ${point}`).toBe('SIGKILL');
      worker = await startWorker();
    }

    for (const { point, recurring, github, checkout } of crashes) {
      expect(await checkoutReaches(srv, checkout.id, ['succeeded', 'failed', 'open'])).toBe('succeeded');
      if (github) {
        // One GitHub grant, waiting for the buyer to pick their account.
        const g = await settledOutcome(srv, checkout.id, githubBenefitId, (o) => o.grants > 0);
        expect(g, point).toMatchObject({ grants: 1, grantsGranted: 0 });
      }
      const o = await settledOutcome(srv, checkout.id, benefitId);
      expect(o, point).toMatchObject({
        checkoutStatus: 'succeeded',
        orders: 1,
        orderStatuses: ['paid'],
        subscriptions: recurring ? 1 : 0,
        grants: 1,
        grantsGranted: 1,
        licenseKeys: 1,
        charges: 1,
        refunds: 0,
      });
    }
  });

  it('refunds the charge, releases the redemption and reopens the checkout when a step fails for good', { timeout: 120_000 }, async () => {
    const c = doomed;
    worker ??= await startWorker();

    const res = await confirmRaw(srv, c.client_secret, { ...buyer(email('unlucky')), confirmation_token_id: 'tok_visa' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'confirmed', total_amount: 2000, discount_amount: 500 });

    // The fulfilment transaction failed: nothing of it was written, the charge came back.
    await checkoutReaches(srv, c.id, ['open']);
    const o = await outcomeOf(srv, c.id, benefitId);
    expect(o).toMatchObject({ checkoutStatus: 'open', charges: 1, refunds: 1, redemptions: 0, orders: 0, subscriptions: 0, grants: 0 });
    const after = await call(srv.url, s.token, 'GET', `/v1/discounts/${discountId}`);
    expect(after.body.redemptions_count).toBe(0);
    const reopened = await call(srv.url, null, 'GET', `/v1/checkouts/client/${c.client_secret}`);
    expect(reopened.body.status).toBe('open');

    // The buyer pays again (the fault fired once), with the same card token: a new charge, not a replay
    // of the refunded one. The released redemption (max_redemptions 1) is theirs again and the purchase
    // goes through, with one order for the second charge.
    const again = await confirmRaw(srv, c.client_secret, { ...buyer(email('unlucky')), confirmation_token_id: 'tok_visa' });
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(await checkoutReaches(srv, c.id, ['succeeded', 'open'])).toBe('succeeded');
    expect(await settledOutcome(srv, c.id, benefitId)).toMatchObject({
      checkoutStatus: 'succeeded',
      orders: 1,
      orderStatuses: ['paid'],
      grantsGranted: 1,
      charges: 2,
      refunds: 1,
      redemptions: 1,
    });
    expect((await call(srv.url, s.token, 'GET', `/v1/discounts/${discountId}`)).body.redemptions_count).toBe(1);
    // The order was paid by the charge that was not refunded.
    const [paidBy] = await srv.deps.orm.em
      .fork()
      .execute<{ refunded: string }[]>(
        'select count(r.id) as refunded from checkouts c left join sandbox_refunds r on r.charge_id = c.processor_charge_id where c.id = ?',
        [c.id],
      );
    expect(Number(paidBy!.refunded)).toBe(0);
  });

  it('keeps the sale (no refund) when a step after the committed fulfilment fails for good, and finishes it', { timeout: 120_000 }, async () => {
    worker ??= await startWorker();
    for (const { checkout } of afterSale) {
      const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email('after-sale')), confirmation_token_id: 'tok_visa' });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    }
    for (const { point, checkout } of afterSale) {
      // The failed step is run again after a pause: the checkout ends succeeded, never reopened.
      expect(await checkoutReaches(srv, checkout.id, ['succeeded', 'open']), point).toBe('succeeded');
      const g = await settledOutcome(srv, checkout.id, githubBenefitId, (o) => o.grants > 0);
      expect(g, point).toMatchObject({ grants: 1, grantsGranted: 0 });
      expect(await settledOutcome(srv, checkout.id, benefitId), point).toMatchObject({
        checkoutStatus: 'succeeded',
        orders: 1,
        orderStatuses: ['paid'],
        grantsGranted: 1,
        charges: 1,
        refunds: 0,
      });
      // The step did fail (its fault's once-only marker was claimed).
      expect(existsSync(path.join(stateDir, encodeURIComponent(`${point}@${checkout.id}=fail`))), point).toBe(true);
    }
  });
});

describe('a confirmation whose workflow start was lost', () => {
  it('is fulfilled by the worker from the recorded start', { timeout: 120_000 }, async () => {
    const c = await newCheckout(srv, s, oneTime);
    // The real confirmation, with the start recorded in its transaction but the after-commit start
    // dropped: as if the API process had died right after the commit.
    await confirmCheckout(
      srv.deps.orm.em.fork(),
      srv.deps,
      c.client_secret,
      checkoutConfirmSchema.parse({ ...buyer(email('lost')), confirmation_token_id: 'tok_visa' }),
      (tx, checkout) =>
        startWorkflow(tx, () => {}, srv.deps, {
          workflowType: 'checkoutConfirmWorkflow',
          taskQueue,
          workflowId: checkoutConfirmWorkflowId(checkout.id),
          args: [{ checkoutId: checkout.id }],
        }),
    );
    const pending = await srv.deps.orm.em.fork().find(WorkflowStart, { workflowId: checkoutConfirmWorkflowId(c.id) });
    expect(pending.map((r) => r.startedAt)).toEqual([null]);
    worker ??= await startWorker();

    expect(await checkoutReaches(srv, c.id, ['succeeded', 'failed', 'open'])).toBe('succeeded');
    expect(await settledOutcome(srv, c.id, benefitId)).toMatchObject({ orders: 1, grantsGranted: 1, charges: 1 });
    const started = await srv.deps.orm.em.fork().find(WorkflowStart, { workflowId: checkoutConfirmWorkflowId(c.id) });
    expect(started[0]!.startedAt).not.toBeNull();
  });
});
