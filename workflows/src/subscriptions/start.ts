/**
 * Starts the `subscription:<id>` lifecycle from the checkout-confirm workflow as an abandoned child
 * (it outlives its parent). REJECT_DUPLICATE makes a second start a no-op: the API may already have
 * started it (it ensures the workflow runs before sending it an update).
 */
import { ParentClosePolicy, log, patched, startChild } from '@temporalio/workflow';
import { subscriptionWorkflowId } from '../ids.ts';
import { subscriptionWorkflow } from './subscription.workflow.ts';

export async function startSubscriptionLifecycle(subscriptionId: string): Promise<void> {
  // Checkout workflows recorded before this step existed replay without it (the API starts theirs on first use).
  if (!patched('subscription-lifecycle')) return;
  try {
    await startChild(subscriptionWorkflow, {
      workflowId: subscriptionWorkflowId(subscriptionId),
      args: [{ subscriptionId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
  } catch (err) {
    // WorkflowExecutionAlreadyStartedError (from @temporalio/common, not re-exported here).
    if ((err as Error | null)?.name === 'WorkflowExecutionAlreadyStartedError') {
      log.info('subscription workflow already running', { subscriptionId });
      return;
    }
    throw err;
  }
}
