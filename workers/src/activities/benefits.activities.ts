/**
 * Benefit grant activities: queueing grant / revoke requests into the per-(benefit, customer)
 * workflows, and applying one request (idempotent; see benefits/grant-actions.ts). Third-party
 * failures that will not heal (404 repository, missing token, ...) are recorded on the grant and
 * answered as `failed`; retryable ones (5xx, 429, network) throw so Temporal retries the activity.
 */
import type { Deps } from '@emporia/api/src/deps.ts';
import type { BenefitActivities } from '@emporia/workflows/contracts';
import { applyBenefitAction, type BenefitActionInput, type BenefitActionResult } from '@emporia/api/src/modules/benefits/grant-actions.ts';
import {
  requestBenefitAction,
  runBenefitRequests,
  type BenefitAction,
  type BenefitRequests,
  type BenefitScope,
} from '@emporia/api/src/modules/benefits/lifecycle.ts';

export function createBenefitActivities(deps: Deps): BenefitActivities {
  const { integrations } = deps;
  const { orm, log } = deps;
  return {
    /** Requests `action` for every benefit of the product, for the customer and scope. */
    async requestBenefitAction(action: BenefitAction, scope: BenefitScope): Promise<void> {
      await requestBenefitAction(deps, action, scope);
    },
    /** Queues the requests a committed change calls for (benefit-requests workflow). */
    async queueBenefitRequests(input: BenefitRequests): Promise<number> {
      return runBenefitRequests(deps, input);
    },
    /** Grants or revokes one benefit for one customer and scope. */
    async applyBenefitAction(input: BenefitActionInput): Promise<BenefitActionResult> {
      const result = await applyBenefitAction(orm.em.fork(), integrations, input);
      if (result.status === 'failed' || result.status === 'pending') {
        log.warn({ ...input, ...result }, `benefit ${input.action} ${result.status}`);
      }
      return result;
    },
  };
}

export type { BenefitActivities };
