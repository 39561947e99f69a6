/** Workflows of the Temporal floor benchmark (bench/temporal-floor/run.ts): the least a workflow can do. */
import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';

interface Acts {
  noop(n: number): Promise<number>;
}
const local = proxyLocalActivities<Acts>({ startToCloseTimeout: '10 seconds' });
const remote = proxyActivities<Acts>({ startToCloseTimeout: '10 seconds' });

/** Start, one local activity, complete: one workflow task. */
export async function oneLocalActivity(n: number): Promise<number> {
  return local.noop(n);
}

/** Start, one activity task, complete: two workflow tasks and one activity task. */
export async function oneRemoteActivity(n: number): Promise<number> {
  return remote.noop(n);
}
