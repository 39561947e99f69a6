/** The benefit workflows' inputs (queued grant / revoke requests) and the benefit activities. */
import type { applyBenefitAction, BenefitActionInput } from '../../../api/src/modules/benefits/grant-actions.ts';
import type { BenefitAction, BenefitRequests, BenefitScope } from '../../../api/src/modules/benefits/lifecycle.ts';
import type { Answer } from '../contract-types.ts';

export type { BenefitActionRequest, BenefitGrantWorkflowInput, BenefitRequests } from '../../../api/src/modules/benefits/lifecycle.ts';

export interface BenefitActivities {
  /** Requests `action` for every benefit of the scope's product, for its customer. */
  requestBenefitAction(action: BenefitAction, scope: BenefitScope): Promise<void>;
  /** Queues the requests one committed change calls for; answers how many. */
  queueBenefitRequests(input: BenefitRequests): Promise<number>;
  /** Applies one grant / revoke request (idempotent). */
  applyBenefitAction(input: BenefitActionInput): Answer<typeof applyBenefitAction>;
}
