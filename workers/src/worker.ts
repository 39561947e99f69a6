/** Builds a Temporal worker for the workflows and activities; used by main.ts and the tests. */
import { createRequire } from 'node:module';
import path from 'node:path';
import { NativeConnection, Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Deps } from '@emporia/api/src/deps.ts';
import { createActivities } from './activities/index.ts';
import { activityMetricsInterceptor } from './metrics.ts';
import { lockConflictInterceptor } from './lock-conflicts.ts';

const require = createRequire(import.meta.url);
export const WORKFLOWS_PATH = require.resolve('@emporia/workflows');
/** Logs every workflow failure with the run's ids (workflows/src/interceptors.ts). */
export const WORKFLOW_INTERCEPTOR_MODULES = [path.join(path.dirname(WORKFLOWS_PATH), 'interceptors.ts')];

export function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES, logger: undefined });
}

export async function createWorker(
  deps: Deps,
  opts: {
    taskQueue?: string;
    workflowBundle?: WorkflowBundleWithSourceMap | { codePath: string };
    /** After shutdown() is called, how long running activities may take to finish before they are cancelled. */
    shutdownGraceMs?: number;
  } = {},
): Promise<Worker> {
  const connection = await NativeConnection.connect({ address: deps.cfg.TEMPORAL_ADDRESS });
  return Worker.create({
    connection,
    namespace: deps.cfg.TEMPORAL_NAMESPACE,
    taskQueue: opts.taskQueue ?? deps.cfg.TEMPORAL_TASK_QUEUE,
    activities: createActivities(deps),
    ...(opts.shutdownGraceMs !== undefined ? { shutdownGraceTime: opts.shutdownGraceMs } : {}),
    // Activity counts and outcomes for GET /metrics (metrics.ts).
    interceptors: { activity: [activityMetricsInterceptor, lockConflictInterceptor(deps.log)], ...(opts.workflowBundle ? {} : { workflowModules: WORKFLOW_INTERCEPTOR_MODULES }) },
    ...(opts.workflowBundle ? { workflowBundle: opts.workflowBundle } : { workflowsPath: WORKFLOWS_PATH }),
  });
}
