/**
 * Starts this task queue's checkout-expiry sweeper (workflows/src/checkouts/checkout-expiry-sweeper.workflow.ts)
 * unless it is running already: every worker process calls it at start-up (USE_EXISTING makes the
 * second and later calls, and other workers of the same task queue, no-ops). Its run outlives the
 * worker; the next worker of the task queue carries it on.
 */
import type { Deps } from '@emporia/api/src/deps.ts';
import type { CheckoutExpirySweeperInput } from '@emporia/workflows/contracts';
import { checkoutExpirySweeperWorkflowId } from '@emporia/workflows/ids';
import { checkoutExpirySweeperRun } from '@emporia/api/src/kit/run-metadata.ts';
import { startWorkflowNow } from '@emporia/api/src/kit/workflow-starts.ts';

export async function startCheckoutExpirySweeper(
  deps: Pick<Deps, 'temporal'>,
  taskQueue: string,
  input: CheckoutExpirySweeperInput = {},
): Promise<void> {
  await startWorkflowNow(
    deps.temporal,
    {
      workflowType: 'checkoutExpirySweeperWorkflow',
      workflowId: checkoutExpirySweeperWorkflowId(taskQueue),
      taskQueue,
      args: [input],
      metadata: checkoutExpirySweeperRun(taskQueue),
    },
    { workflowIdConflictPolicy: 'USE_EXISTING' },
  );
}
