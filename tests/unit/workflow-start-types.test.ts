/**
 * The start helpers check the workflow type and its arguments at compile time (`npx tsc`, run by
 * typecheck.test.ts): each `@ts-expect-error` below fails the type check if the call were accepted.
 */
import { describe, expect, it } from 'vitest';
import type { WorkflowArgs, WorkflowName } from '../../api/src/kit/workflow-starts.ts';

const name: WorkflowName = 'refundWorkflow';
const args: WorkflowArgs<'refundWorkflow'> = [{ refundId: 'r' }];
// @ts-expect-error not a registered workflow
const unknownName: WorkflowName = 'refundWorkflw';
// @ts-expect-error the refund workflow takes { refundId }
const wrongArgs: WorkflowArgs<'refundWorkflow'> = [{ checkoutId: 'c' }];

describe('workflow start types', () => {
  it('name the registered workflows and their arguments', () => {
    expect([name, args, unknownName, wrongArgs]).toEqual(['refundWorkflow', [{ refundId: 'r' }], 'refundWorkflw', [{ checkoutId: 'c' }]]);
  });
});
