/**
 * How the API hands a change to the subscription's workflow: make sure `subscription:<id>` runs (a
 * no-op when it does), then execute the named update and wait for its answer. The update's validator
 * decides whether the change is allowed (workflows/src/subscriptions/rules.ts); its refusal, or a
 * product the activity refused, comes back as the ApiError of the documented shape. A subscription
 * that has ended has no workflow to ask: the same rule answers from its row.
 */
import { ApplicationFailure, WorkflowUpdateFailedError, type UpdateDefinition } from '@temporalio/client';
import { SUBSCRIPTION_UPDATES, subscriptionWorkflowId } from '@emporia/workflows/ids';
import type { SubscriptionUpdateName } from '@emporia/workflows/subscription-rules';
import type { SubscriptionUpdates } from '@emporia/workflows/subscription-updates';
import type { Deps } from '../../deps.ts';
import { ApiError, RequestValidationError, type ValidationIssue } from '../../kit/errors.ts';
import type { EntityManager } from '../../kit/db.ts';
import { subscriptionRun, type RunMetadata } from '../../kit/run-metadata.ts';
import { startWorkflowNow } from '../../kit/workflow-starts.ts';
import { Subscription } from './entities.ts';
import type { CancellationReason } from './rules.ts';
import { isEnded, refusalError } from './rules.ts';

export type { SubscriptionUpdateName };
type UpdateArgs<K extends SubscriptionUpdateName> = SubscriptionUpdates[K] extends UpdateDefinition<any, infer A, any> ? A : never;
type UpdateAnswer<K extends SubscriptionUpdateName> = SubscriptionUpdates[K] extends UpdateDefinition<infer R, any, any> ? R : never;

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
  const metadata = deps.orm ? await subscriptionRunOf(deps.orm.em.fork(), subscriptionId).catch(() => null) : null; // ignore: the run's search attributes only; it starts without them
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

/** Executes `update` with its typed arguments on the subscription's workflow; answers the update's answer. */
export async function updateSubscriptionWorkflow<K extends SubscriptionUpdateName>(
  deps: Pick<Deps, 'temporal' | 'cfg'>,
  s: Subscription,
  update: K,
  ...args: UpdateArgs<K>
): Promise<UpdateAnswer<K>> {
  if (isEnded(s)) throw refusalError(update, s) ?? new ApiError(410, 'ResourceUnavailable', 'This subscription has ended.');
  await ensureSubscriptionWorkflow(deps, s.id);
  try {
    const handle = deps.temporal.workflow.getHandle(subscriptionWorkflowId(s.id));
    // The name's definition types `args` and the answer (the client's overloads cannot follow a generic name).
    return await handle.executeUpdate<UpdateAnswer<K>, [unknown]>(SUBSCRIPTION_UPDATES[update], { args: args as unknown as [unknown] });
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) throw toApiError(err);
    throw err;
  }
}

/**
 * `cancel_at_period_end` as the seller and the customer send it: true cancels at the end of the
 * period (with the reason and comment), false uncancels, null or absent changes nothing.
 */
export async function setCancelAtPeriodEnd(
  deps: Pick<Deps, 'temporal' | 'cfg'>,
  s: Subscription,
  cancelAtPeriodEnd: boolean | null | undefined,
  reason: { reason?: CancellationReason | null; comment?: string | null },
): Promise<void> {
  if (cancelAtPeriodEnd === true) await updateSubscriptionWorkflow(deps, s, 'cancel', reason);
  else if (cancelAtPeriodEnd === false) await updateSubscriptionWorkflow(deps, s, 'uncancel');
}
