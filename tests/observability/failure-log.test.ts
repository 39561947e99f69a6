/**
 * The worker logs a failed run once with the ids an operator searches by (workflows/src/interceptors.ts),
 * through the Temporal runtime logger (captured here instead of printed).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { DefaultLogger, Runtime, type LogEntry } from '@temporalio/worker';
import { startTestServer, type TestServer } from '../harness.ts';
import { searchAttributePairs } from '../../workflows/src/metadata.ts';
import { webhookDeliveryWorkflowId } from '../../workflows/src/ids.ts';

const entries: LogEntry[] = [];
Runtime.install({ logger: new DefaultLogger('WARN', (e) => entries.push(e)) });

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
});

it('logs a failed run with its workflow id, type and search attributes', { timeout: 120_000 }, async () => {
  const organizationId = randomUUID();
  const endpointId = randomUUID();
  const workflowId = webhookDeliveryWorkflowId(randomUUID(), endpointId);
  // A retry workflow for an event that does not exist fails (webhooks: never a quiet success).
  const handle = await srv.deps.temporal.workflow.start('webhookDeliveryWorkflow', {
    workflowId,
    taskQueue: srv.deps.cfg.TEMPORAL_TASK_QUEUE,
    args: [{ webhookEventId: randomUUID(), settings: { baseDelayMs: 10, maxDelayMs: 10, maxAttempts: 1, disableAfter: 3 }, firstAttempt: 1 }],
    typedSearchAttributes: searchAttributePairs({ organizationId, webhookEndpointId: endpointId }),
    staticSummary: 'Deliver webhook (test)',
  });
  await expect(handle.result()).rejects.toThrow();
  const logged = () => entries.filter((e) => e.message === 'workflow failed' && e.meta?.workflowId === workflowId);
  for (let i = 0; i < 100 && !logged().length; i++) await new Promise((r) => setTimeout(r, 100));
  const failed = logged();
  expect(failed).toHaveLength(1);
  expect(failed[0]!.meta).toMatchObject({ workflowType: 'webhookDeliveryWorkflow', organizationId, webhookEndpointId: endpointId });
  expect(String(failed[0]!.meta?.cause)).toContain('webhook event');
});
