/**
 * Starts the `subscription:<id>` lifecycle from the checkout-confirm workflow as an abandoned child
 * (it outlives its parent). REJECT_DUPLICATE makes a second start a no-op: the API may already have
 * started it (it ensures the workflow runs before sending it an update).
 */
import { ParentClosePolicy, log, startChild, workflowInfo } from '@temporalio/workflow';
import { subscriptionWorkflowId } from '../ids.ts';
import { SEARCH_ATTRIBUTES, runStartOptions, type RunMetadata } from '../metadata.ts';
import { subscriptionWorkflow } from './subscription.workflow.ts';

/**
 * `run`: the child's summary and search attributes (from the fulfilment step). The search attributes
 * are set only when this run carries them too (they are registered on the namespace then).
 */
export async function startSubscriptionLifecycle(subscriptionId: string, run?: RunMetadata | null): Promise<void> {
  try {
    await startChild(subscriptionWorkflow, {
      workflowId: subscriptionWorkflowId(subscriptionId),
      args: [{ subscriptionId }],
      parentClosePolicy: ParentClosePolicy.ABANDON,
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      ...runStartOptions(run, workflowInfo().typedSearchAttributes.get(SEARCH_ATTRIBUTES.organizationId) !== undefined),
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
