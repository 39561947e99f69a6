/**
 * The webhook retry schedule at its production values (2 s × 2^n, ±25 % jitter, capped at 20 min,
 * 10 attempts), run on Temporal's time-skipping server: about 17 minutes of retries in a few seconds.
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

async function run(succeedOnAttempt: number | null) {
  const attemptsAt: number[] = [];
  const failedCalls: unknown[] = [];
  const taskQueue = `webhook-timeskip-${succeedOnAttempt}`;
  const worker = await timeSkippingWorker(env, taskQueue, {
    async deliverWebhook({ attempt }: { attempt: number }) {
      attemptsAt.push(await env.currentTimeMs());
      return attempt === succeedOnAttempt ? { outcome: 'delivered', httpCode: 200 } : { outcome: 'failed', httpCode: 503 };
    },
    async webhookEventFailed(input: unknown) {
      failedCalls.push(input);
      return { disabled: false };
    },
    async dispatchOutbox() {
      return { dispatched: 0, full: false };
    },
    async productAnnouncement() {
      return null;
    },
    async sendNotification() {
      return { messageId: null, skipped: true };
    },
  });
  const result = await worker.runUntil(
    env.client.workflow.execute('webhookDeliveryWorkflow', {
      taskQueue,
      workflowId: `webhook-delivery:test:${taskQueue}`,
      args: [{ webhookEventId: 'we-1', settings: PRODUCTION }],
    }),
  );
  return { result, attemptsAt, failedCalls };
}

describe('webhook delivery schedule (time-skipping)', () => {
  it('retries with exponential, jittered, capped gaps until the receiver answers', async () => {
    const started = Date.now();
    const { result, attemptsAt, failedCalls } = await run(10);
    expect(result).toEqual({ delivered: true, attempts: 10 });
    expect(failedCalls).toEqual([]);
    const gaps = attemptsAt.slice(1).map((t, i) => t - attemptsAt[i]!);
    gaps.forEach((gap, i) => {
      const nominal = Math.min(2_000 * 2 ** i, 20 * 60_000);
      expect(gap).toBeGreaterThanOrEqual(nominal * 0.75 - 50);
      expect(gap).toBeLessThanOrEqual(nominal * 1.25 + 2_000);
    });
    // 2 + 4 + … + 512 s ≈ 17 minutes of Temporal time (± jitter)…
    const total = attemptsAt.at(-1)! - attemptsAt[0]!;
    expect(total).toBeGreaterThan(0.75 * 1_022_000);
    expect(total).toBeLessThan(1.25 * 1_022_000 + 10_000);
    // …in far less wall-clock time.
    expect(Date.now() - started).toBeLessThan(total / 10);
  });

  it('gives up after the last attempt and reports the event as failed once', async () => {
    const { result, attemptsAt, failedCalls } = await run(null);
    expect(result).toEqual({ delivered: false, attempts: 10 });
    expect(attemptsAt).toHaveLength(10);
    expect(failedCalls).toEqual([{ webhookEventId: 'we-1', disableAfter: 10 }]);
  });
});
