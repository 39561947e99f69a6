/**
 * Tells the API's start helpers (api/src/kit/workflow-starts.ts) which workflows the worker
 * registers, so a start's workflow type and `args` are type-checked. Types only; nothing imports this
 * file (declaration merging), so the API's imports do not reach workflow code.
 */
import type * as workflows from './index.ts';

type Workflows = typeof workflows;

declare module '../../api/src/kit/workflow-starts.ts' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface WorkflowRegistry extends Workflows {}
}
