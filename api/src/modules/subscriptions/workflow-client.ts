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
import type { EntityManager } from '../../kit/db.ts';
import { subscriptionRun, type RunMetadata } from '../../kit/run-metadata.ts';
import { startWorkflowNow } from '../../kit/workflow-starts.ts';
import { Subscription } from './entities.ts';
import { checkCancel, checkUncancel } from './service.ts';

export type SubscriptionUpdateName = keyof typeof SUBSCRIPTION_UPDATES;

/** The summary and search attributes of `subscription:<id>` runs (one read; null when the subscription is gone). */
export async function subscriptionRunOf(em: EntityManager, subscriptionId: string): Promise<RunMetadata | null> {
  const s = await em.findOne(
    Subscription,
    { id: subscriptionId },
    { fields: ['organization', 'status', 'amount', 'currency', 'recurringInterval', 'customer.email', 'product.name'] },
  );
  if (!s) return null;
  return subscriptionRun({
    subscriptionId,
    organizationId: s.organization.id,
    customerId: s.customer.id,
    customerEmail: s.customer.email ?? null,
    productName: s.product.name,
    amount: s.amount,
    currency: s.currency,
    recurringInterval: s.recurringInterval,
    status: s.status,
  });
}

export async function ensureSubscriptionWorkflow(deps: Pick<Deps, 'temporal' | 'cfg'> & Partial<Pick<Deps, 'orm'>>, subscriptionId: string): Promise<void> {
  const metadata = deps.orm ? await subscriptionRunOf(deps.orm.em.fork(), subscriptionId).catch(() => null) : null;
  await startWorkflowNow(deps.temporal, {
    workflowType: 'subscriptionWorkflow',
    workflowId: subscriptionWorkflowId(subscriptionId),
    taskQueue: deps.cfg.TEMPORAL_TASK_QUEUE,
    args: [{ subscriptionId }],
    metadata,
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

/**
 * `cancel_at_period_end` as the seller and the customer send it: true cancels at the end of the
 * period (with the reason and comment), false uncancels, null or absent changes nothing. The
 * database checks run first, so the usual 403 / 410 / 400 come back without a workflow round trip.
 */
export async function setCancelAtPeriodEnd(
  deps: Pick<Deps, 'temporal' | 'cfg'>,
  s: Subscription,
  cancelAtPeriodEnd: boolean | null | undefined,
  reason: { reason?: string | null; comment?: string | null },
): Promise<void> {
  if (cancelAtPeriodEnd === true) {
    checkCancel(s);
    await updateSubscriptionWorkflow(deps, s.id, 'cancel', [reason]);
  } else if (cancelAtPeriodEnd === false) {
    checkUncancel(s);
    await updateSubscriptionWorkflow(deps, s.id, 'uncancel', []);
  }
}
