/**
 * Workflow interceptors bundled with every workflow (workers/src/worker.ts): a run that fails, or whose
 * workflow task fails (a bug or a non-deterministic change; Temporal retries the task), is logged
 * once per failure with the ids an operator searches by (its search attributes: OrganizationId,
 * CustomerId, the business key) next to the workflow id, run id and type that every workflow log line
 * carries. Not logged while replaying, nor for continue-as-new and cancellation.
 */
import {
  ContinueAsNew,
  TemporalFailure,
  isCancellation,
  log,
  rootCause,
  workflowInfo,
  type WorkflowInterceptorsFactory,
} from '@temporalio/workflow';
import { SEARCH_ATTRIBUTES, type RunKey } from './metadata.ts';

/** The run's platform search attributes as log fields (`organizationId`, `customerId`, ...). */
export function runIdsForLog(): Record<string, string> {
  const out: Record<string, string> = {};
  const attrs = workflowInfo().typedSearchAttributes;
  for (const k of Object.keys(SEARCH_ATTRIBUTES) as RunKey[]) {
    const v = attrs.get(SEARCH_ATTRIBUTES[k]);
    if (v !== undefined) out[k] = String(v);
  }
  return out;
}

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        try {
          return await next(input);
        } catch (err) {
          if (!(err instanceof ContinueAsNew) && !isCancellation(err)) {
            // A TemporalFailure (ApplicationFailure, ActivityFailure, ...) fails the run; anything else fails
            // the workflow task, which Temporal retries until the code is fixed.
            const runFails = err instanceof TemporalFailure;
            log.error(runFails ? 'workflow failed' : 'workflow task failed; Temporal retries it', {
              ...runIdsForLog(),
              error: err instanceof Error ? `${err.name}: ${err.message}` : String(err),
              cause: rootCause(err) ?? null,
            });
          }
          throw err;
        }
      },
    },
  ],
});
