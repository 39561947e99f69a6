/**
 * How the API hands a validated change to the subscription's workflow: make sure `subscription:<id>`
 * runs (a no-op when it does; subscriptions created before the workflow existed get one), then
 * execute the named update and wait for its answer. A rule the workflow's activity refused comes back
 * as the same ApiError the API's own checks would raise.
 */
import { ApplicationFailure, WorkflowUpdateFailedError } from '@temporalio/client';
import { SUBSCRIPTION_UPDATES, subscriptionWorkflowId } from '@emporia/workflows/ids';
import type { Deps } from '../../deps.ts';
import { ApiError, RequestValidationError, type ValidationIssue } from '../../kit/errors.ts';
import { startRecorded } from '../../kit/workflow-starts.ts';

export type SubscriptionUpdateName = keyof typeof SUBSCRIPTION_UPDATES;

export async function ensureSubscriptionWorkflow(deps: Pick<Deps, 'temporal' | 'cfg'>, subscriptionId: string): Promise<void> {
  await startRecorded(deps.temporal, {
    workflowType: 'subscriptionWorkflow',
    workflowId: subscriptionWorkflowId(subscriptionId),
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    args: [{ subscriptionId }],
  });
}

function toApiError(err: unknown): unknown {
  let cause: unknown = err;
  while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as { cause?: unknown }).cause;
  if (!(cause instanceof ApplicationFailure) || !cause.type) return err;
  const details = (cause.details?.[0] ?? {}) as { status?: number; issues?: ValidationIssue[] | null };
  if (details.issues) return new RequestValidationError(details.issues);
  if (typeof details.status === 'number') return new ApiError(details.status, cause.type, cause.message);
  return err;
}

export async function updateSubscriptionWorkflow(
  deps: Pick<Deps, 'temporal' | 'cfg'>,
  subscriptionId: string,
  update: SubscriptionUpdateName,
  args: unknown[],
): Promise<unknown> {
  await ensureSubscriptionWorkflow(deps, subscriptionId);
  try {
    return await deps.temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).executeUpdate(SUBSCRIPTION_UPDATES[update], { args: args as [unknown] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw toApiError(err);
    throw err;
  }
}
