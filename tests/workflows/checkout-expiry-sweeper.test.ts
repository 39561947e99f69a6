/**
 * The checkout-expiry sweeper's schedule on Temporal's time-skipping server, against a simulated
 * checkouts table (the activity answers from a list, with the server's clock as the database's): full
 * batches are followed at once, a sleep ends at the next expiry (at least a second later), an idle
 * sweeper sleeps the TTL, and a checkout created while it sleeps is expired on time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowContinuedAsNewError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { checkoutExpirySweeperWorkflowId } from '../../workflows/src/ids.ts';
import { timeSkippingEnv, timeSkippingWorker } from '../time-skipping.ts';

const TTL_SECONDS = 3600;

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnv();
});
afterAll(async () => {
  await env?.teardown();
});

interface SimulatedCheckout {
  name: string;
  /** When it becomes visible (committed), ms after the start. */
  createdAt: number;
  /** ms after the start. */
  expiresAt: number;
  /** When the sweeper marked it expired, ms after the start. */
  expiredAt?: number;
}

describe('checkout-expiry sweeper (time-skipping)', () => {
  it('expires each checkout soon after its expires_at, in batches, sleeping at most the TTL', async () => {
    const taskQueue = 'checkout-expiry-sweeper-timeskip';
    const t0 = await env.currentTimeMs();
    const checkouts: SimulatedCheckout[] = [
      // Three due together with a batch of two: a full batch, then the rest at once.
      { name: 'a', createdAt: 0, expiresAt: 10_000 },
      { name: 'b', createdAt: 0, expiresAt: 10_000 },
      { name: 'c', createdAt: 0, expiresAt: 10_000 },
      // Due within a second of the others but late enough that the round taking c (however long the
      // loaded machine takes to run it) does not reach them: the next round, at least a second
      // later, takes them together.
      { name: 'd', createdAt: 0, expiresAt: 10_900 },
      { name: 'e', createdAt: 0, expiresAt: 10_950 },
      { name: 'f', createdAt: 0, expiresAt: 95_000 },
      // Created while the sweeper sleeps with nothing open: found by its TTL-bounded wake-up.
      { name: 'late', createdAt: 100_000, expiresAt: 100_000 + TTL_SECONDS * 1000 },
    ];
    const rounds: { at: number; expired: number }[] = [];
    const worker = await timeSkippingWorker(env, taskQueue, {
      async expireDueCheckouts({ limit }: { limit: number }) {
        const now = (await env.currentTimeMs()) - t0;
        const due = checkouts
          .filter((c) => c.createdAt <= now && c.expiredAt === undefined && c.expiresAt <= now)
          .sort((x, y) => x.expiresAt - y.expiresAt)
          .slice(0, limit);
        for (const c of due) c.expiredAt = now;
        const open = checkouts.filter((c) => c.createdAt <= now && c.expiredAt === undefined);
        const next = open.length ? Math.min(...open.map((c) => c.expiresAt)) : null;
        rounds.push({ at: now, expired: due.length });
        return {
          expired: due.length,
          nextExpiresAt: next === null ? null : new Date(t0 + next).toISOString(),
          now: new Date(t0 + now).toISOString(),
          ttlSeconds: TTL_SECONDS,
        };
      },
    });
    const workflowId = checkoutExpirySweeperWorkflowId(taskQueue);
    const maxIterations = 10;
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('checkoutExpirySweeperWorkflow', {
        taskQueue,
        workflowId,
        args: [{ limit: 2, maxIterations }],
      });
      // The first run ends by continuing as new once it has done maxIterations rounds.
      await expect(
        env.client.workflow.getHandle(workflowId, handle.firstExecutionRunId, { followRuns: false }).result(),
      ).rejects.toBeInstanceOf(WorkflowContinuedAsNewError);
      await env.client.workflow.getHandle(workflowId).terminate('test finished').catch(() => {});
    });

    for (const c of checkouts) {
      expect(c.expiredAt, c.name).toBeDefined();
      expect(c.expiredAt!, c.name).toBeGreaterThanOrEqual(c.expiresAt);
      // The minimum sleep (1 s) plus the time a round takes.
      expect(c.expiredAt! - c.expiresAt, c.name).toBeLessThan(2_000);
    }
    // a, b (full) → c at once; d and e together; never more than a batch of two.
    expect(rounds.every((r) => r.expired <= 2)).toBe(true);
    const byName = Object.fromEntries(checkouts.map((c) => [c.name, c.expiredAt!]));
    expect(byName.c! - byName.a!).toBeLessThan(1_000);
    expect(byName.d).toBe(byName.e);
    // With nothing open the sweeper sleeps exactly the TTL; it never sleeps longer.
    const gaps = rounds.slice(1).map((r, i) => r.at - rounds[i]!.at);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(TTL_SECONDS * 1000 + 1_000);
    expect(gaps.some((g) => g >= TTL_SECONDS * 1000 - 10_000)).toBe(true);
    // maxIterations rounds in the first run (and perhaps the first of the next one before it was terminated).
    expect(rounds.length).toBeGreaterThanOrEqual(maxIterations);
  });
});
