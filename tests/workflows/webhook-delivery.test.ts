/**
 * The webhook retry schedule at its production values (2 s × 2^n, ±25 % jitter, capped at 20 min),
 * run on Temporal's time-skipping server: hours of retries in a few seconds of test time.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { timeSkippingEnv, timeSkippingWorker } from '../time-skipping.ts';

const PRODUCTION = { baseDelayMs: 2_000, maxDelayMs: 20 * 60_000, maxAttempts: 10, disableAfter: 10 };

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await timeSkippingEnv();
});
afterAll(async () => {
  await env?.teardown();
});

let runs = 0;
async function run(succeedOnAttempt: number | null, opts: { firstAttempt?: number; maxAttempts?: number } = {}) {
  const attempts: { attempt: number; at: number }[] = [];
  const failedCalls: unknown[] = [];
  const taskQueue = `webhook-timeskip-${++runs}`;
  const worker = await timeSkippingWorker(env, taskQueue, {
    async deliverWebhook({ attempt }: { attempt: number }) {
      attempts.push({ attempt, at: await env.currentTimeMs() });
      return attempt === succeedOnAttempt ? { outcome: 'delivered', httpCode: 200 } : { outcome: 'failed', httpCode: 503 };
    },
    async webhookEventFailed(input: unknown) {
      failedCalls.push(input);
      return { disabled: false };
    },
  });
  const startedAt = await env.currentTimeMs();
  const result = await worker.runUntil(
    env.client.workflow.execute('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: `webhook-delivery:test:${taskQueue}`,
      args: [{ webhookEventId: 'we-1', settings: { ...PRODUCTION, maxAttempts: opts.maxAttempts ?? PRODUCTION.maxAttempts }, firstAttempt: opts.firstAttempt }],
    }),
  );
  const gaps = attempts.slice(1).map((a, i) => a.at - attempts[i]!.at);
  return { result, attempts, gaps, startedAt, failedCalls };
}

const nominal = (attempt: number) => Math.min(2_000 * 2 ** (attempt - 1), 20 * 60_000);

describe('webhook delivery schedule (time-skipping)', () => {
  it('retries with exponential gaps until the receiver answers', async () => {
    const { result, attempts, gaps, failedCalls } = await run(10);
    expect(result).toEqual({ delivered: true, attempts: 10 });
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(failedCalls).toEqual([]);
    gaps.forEach((gap, i) => {
      expect(gap).toBeGreaterThanOrEqual(nominal(i + 1) * 0.75 - 50);
      expect(gap).toBeLessThanOrEqual(nominal(i + 1) * 1.25 + 2_000);
    });
    // 2 + 4 + … + 512 s ≈ 17 minutes of Temporal time (± jitter).
    const total = attempts.at(-1)!.at - attempts[0]!.at;
    expect(total).toBeGreaterThan(0.75 * 1_022_000);
    expect(total).toBeLessThan(1.25 * 1_022_000 + 10_000);
  });

  it('caps the gap at 20 minutes and jitters it', async () => {
    // 14 attempts: the gaps after the 10th would be 1024 s, 2048 s, … uncapped.
    const { result, gaps } = await run(14, { maxAttempts: 14 });
    expect(result).toEqual({ delivered: true, attempts: 14 });
    const capped = gaps.slice(10);
    expect(capped).toHaveLength(3);
    for (const gap of capped) {
      expect(gap).toBeGreaterThanOrEqual(20 * 60_000 * 0.75 - 50);
      expect(gap).toBeLessThanOrEqual(20 * 60_000 * 1.25 + 2_000);
    }
    // Jitter: the gaps are not the nominal schedule (each is off by more than 1 % in most cases).
    const offNominal = gaps.filter((gap, i) => Math.abs(gap / nominal(i + 1) - 1) > 0.01);
    expect(offNominal.length).toBeGreaterThanOrEqual(gaps.length / 2);
  });

  it('after a failed first attempt by the dispatcher, waits the first gap and goes on from attempt 2', async () => {
    const { result, attempts, startedAt } = await run(3, { firstAttempt: 2 });
    expect(result).toEqual({ delivered: true, attempts: 3 });
    expect(attempts.map((a) => a.attempt)).toEqual([2, 3]);
    expect(attempts[0]!.at - startedAt).toBeGreaterThanOrEqual(nominal(1) * 0.75 - 50);
  });

  it('gives up after the last attempt and reports the event as failed once', async () => {
    const { result, attempts, failedCalls } = await run(null);
    expect(result).toEqual({ delivered: false, attempts: 10 });
    expect(attempts).toHaveLength(10);
    expect(failedCalls).toEqual([{ webhookEventId: 'we-1', disableAfter: 10 }]);
  });
});
