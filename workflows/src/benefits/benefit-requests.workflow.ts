/**
 * benefit-requests:<request_id> — queues into benefit-grant workflows the requests one committed
 * change calls for (a customer deleted: revoke their grants; a benefit updated or deleted: update or
 * revoke its grants; a customer chose the account a grant needs). Its start is recorded in the
 * change's transaction (kit/workflow-starts.ts), so a crash after the commit only delays it.
 */
import { proxyActivities } from '@temporalio/workflow';
import type { BenefitActivities, BenefitRequests } from './contract.ts';

const { queueBenefitRequests } = proxyActivities<BenefitActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' },
});

export async function benefitRequestsWorkflow(input: BenefitRequests): Promise<{ queued: number }> {
  return { queued: await queueBenefitRequests(input) };
}
