/**
 * Starting workflows, typed by the workflow: `startWorkflow` is the one way the API starts a workflow
 * after a write; `startWorkflowNow` starts one outside a transaction (a worker's long-running
 * sweepers, the subscription lifecycle before an update); `signalWithStartWorkflow` queues a signal,
 * starting the run if it is idle. The workflow type is checked against the names the worker registers
 * (workflows/src/registry.ts) and `args` against that workflow's parameters.
 *
 * Durable starts. A write that must be followed by a workflow (checkout-confirm, refund,
 * product-created, product-benefits) records a `workflow_starts` row in its own transaction and, after
 * commit, starts the workflow at once (the fast path) and marks the row started. If the process dies
 * between commit and start, the row stays unstarted and the worker's sweeper (`startPendingWorkflows`,
 * run by workers/src/outbox-listener.ts) starts it a few seconds later. Workflow ids are
 * deterministic: a start of a workflow that is already running, or that already completed, is a
 * no-op (WorkflowExecutionAlreadyStarted); only a failed earlier run may be started again. The row
 * keeps the run's search attributes and summary (`metadata`, kit/run-metadata.ts), so a run the
 * sweeper starts reads and is found like one the fast path started.
 */
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Client, Workflow, WorkflowStartOptions } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { EntityManager } from './db.ts';
import type { Logger } from './logger.ts';
import { startWithMetadata, type RunMetadata } from './run-metadata.ts';

export const WorkflowStart = defineEntity({
  name: 'WorkflowStart',
  tableName: 'workflow_starts',
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    createdAt: p.datetime().onCreate(() => new Date()),
    workflowType: p.string(),
    workflowId: p.string().index(),
    taskQueue: p.string(),
    args: p.json<unknown[]>(),
    /** Search attributes, summary and details of the run (kit/run-metadata.ts); null when the start has none. */
    metadata: p.json<RunMetadata>().nullable(),
    startedAt: p.datetime().nullable().index(),
  },
});
export type WorkflowStart = InferEntity<typeof WorkflowStart>;

/**
 * Every workflow the worker registers, by name. Empty here (kit imports no workflow code);
 * workflows/src/registry.ts merges `typeof import('workflows/src/index.ts')` into it.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface WorkflowRegistry {}
/** The name of every workflow the worker registers. */
export type WorkflowName = { [K in keyof WorkflowRegistry]: WorkflowRegistry[K] extends (...args: any[]) => Promise<unknown> ? K : never }[keyof WorkflowRegistry];
/** The arguments of workflow `K`. */
export type WorkflowArgs<K extends WorkflowName> = WorkflowRegistry[K] extends (...args: infer A) => Promise<unknown> ? A : never;

export interface WorkflowStartSpec<K extends WorkflowName = WorkflowName> {
  workflowType: K;
  /** Deterministic, from workflows/src/ids.ts. */
  workflowId: string;
  taskQueue: string;
  args: WorkflowArgs<K>;
  /** What the run shows and is found by in Temporal (kit/run-metadata.ts builders). */
  metadata?: RunMetadata | null;
}

/**
 * The one way to start a workflow after a write: records the start in `tx` and registers the fast
 * path with `after` (the inTransaction after-commit hook): start now, then mark the row started.
 * E.g. `startWorkflow(tx, after, deps, { workflowType: 'refundWorkflow', workflowId: refundWorkflowId(id),
 * taskQueue, args: [{ refundId: id }] })`.
 */
export function startWorkflow<K extends WorkflowName>(
  tx: EntityManager,
  after: (fn: () => Promise<unknown>) => void,
  deps: { orm: { em: EntityManager }; temporal: Client; log: Logger },
  spec: WorkflowStartSpec<K>,
): void {
  const row = tx.create(WorkflowStart, { ...spec, metadata: spec.metadata ?? null, startedAt: null });
  after(() => startRecorded(deps, row.id, spec));
}

/**
 * The fast path of a start whose `workflow_starts` row (`id`) has committed: start now, then mark the
 * row started. For writes that record the row in plain SQL; `startWorkflow` registers this after commit.
 */
export async function startRecorded<K extends WorkflowName>(
  deps: { orm: { em: EntityManager }; temporal: Client; log: Logger },
  id: string,
  spec: WorkflowStartSpec<K>,
): Promise<void> {
  try {
    // The write has committed: if Temporal does not answer soon (restarting, unreachable), answer the
    // caller and leave the start to the sweeper instead of retrying for the client's ~20 s.
    await deps.temporal.connection.withDeadline(Date.now() + FAST_START_DEADLINE_MS, () => startWorkflowNow(deps.temporal, spec));
    markStarted(deps, id);
  } catch (err) {
    // Committed already: the sweeper starts it later, so the caller still gets its answer.
    deps.log.warn({ err, workflowId: spec.workflowId }, 'workflow start deferred to the sweeper');
  }
}

/** How long the fast path waits for Temporal to take a start before it leaves it to the sweeper. */
const FAST_START_DEADLINE_MS = 5_000;

/** How long fast-path starts wait to be marked together (far below the sweeper's grace of seconds). */
const MARK_BATCH_MS = 50;
const pendingMarks = new WeakMap<object, { ids: string[]; timer: NodeJS.Timeout | null }>();

/**
 * Marks a fast-path start, batched: one UPDATE for the starts of the next MARK_BATCH_MS instead of one
 * each (a busy API starts a workflow per confirmation). A batch lost with the process only
 * means the sweeper finds those rows, starts them (an AlreadyStarted no-op) and marks them.
 */
function markStarted(deps: { orm: { em: EntityManager }; log: Logger }, id: string): void {
  let batch = pendingMarks.get(deps.orm.em);
  if (!batch) pendingMarks.set(deps.orm.em, (batch = { ids: [], timer: null }));
  batch.ids.push(id);
  const b = batch;
  b.timer ??= setTimeout(() => {
    const ids = b.ids;
    b.ids = [];
    b.timer = null;
    deps.orm.em
      .fork()
      .nativeUpdate(WorkflowStart, { id: { $in: ids } }, { startedAt: new Date() })
      .catch((err: unknown) => deps.log.warn({ err, count: ids.length }, 'marking workflow starts failed; the sweeper will'));
  }, MARK_BATCH_MS);
  b.timer.unref();
}

/** Id policies a start may set instead of the default (a failed run may be started again, nothing else). */
type StartPolicies = Pick<WorkflowStartOptions, 'workflowIdReusePolicy' | 'workflowIdConflictPolicy'>;

/**
 * Starts a workflow now, outside a transaction (with its search attributes and summary). An execution
 * with this id already running or completed counts as started (`'already'`).
 */
export async function startWorkflowNow<K extends WorkflowName>(
  temporal: Client,
  spec: WorkflowStartSpec<K>,
  policies: StartPolicies = { workflowIdReusePolicy: 'ALLOW_DUPLICATE_FAILED_ONLY' },
): Promise<'started' | 'already'> {
  try {
    await startWithMetadata(temporal, spec.metadata, (meta) =>
      temporal.workflow.start(spec.workflowType, {
        taskQueue: spec.taskQueue,
        workflowId: spec.workflowId,
        args: spec.args as unknown[],
        ...policies,
        ...meta,
      }),
    );
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already';
    throw err;
  }
}

/** Sends `signal` to the workflow, starting it first when it is not running. */
export async function signalWithStartWorkflow<K extends WorkflowName, S extends any[]>(
  temporal: Client,
  spec: WorkflowStartSpec<K> & { signal: string; signalArgs: S },
): Promise<void> {
  await startWithMetadata(temporal, spec.metadata, (meta) =>
    temporal.workflow.signalWithStart<Workflow, S>(spec.workflowType, {
      taskQueue: spec.taskQueue,
      workflowId: spec.workflowId,
      args: spec.args as unknown[],
      signal: spec.signal,
      signalArgs: spec.signalArgs,
      ...meta,
    } as never),
  );
}

/**
 * The safety net: starts every recorded start of `taskQueue` still unstarted after `graceMs` (the fast
 * path normally marks it within milliseconds) and marks it. Answers how many it started.
 */
export async function startPendingWorkflows(
  em: EntityManager,
  temporal: Client,
  taskQueue: string,
  opts: { graceMs?: number; limit?: number } = {},
): Promise<number> {
  const before = new Date(Date.now() - (opts.graceMs ?? 3000));
  const rows = await em.find(
    WorkflowStart,
    { startedAt: null, taskQueue, createdAt: { $lt: before } },
    { orderBy: { createdAt: 'asc' }, limit: opts.limit ?? 100 },
  );
  let started = 0;
  for (const r of rows) {
    const outcome = await startWorkflowNow(temporal, r as unknown as WorkflowStartSpec);
    if (outcome === 'started') started++;
    await em.nativeUpdate(WorkflowStart, { id: r.id }, { startedAt: new Date() });
  }
  return started;
}
