/** The subscription workflow's updates, typed for the workflow and its callers; their rules are in rules.ts. */
import { ApplicationFailure, defineUpdate } from '@temporalio/workflow';
import { SUBSCRIPTION_UPDATES } from '../ids.ts';
import type { CancelArgs, ChangeAnswer, ChangeProductArgs } from './contract.ts';
import type { Refusal } from './rules.ts';

export const cancelUpdate = defineUpdate<ChangeAnswer, [CancelArgs]>(SUBSCRIPTION_UPDATES.cancel);
export const uncancelUpdate = defineUpdate<ChangeAnswer, []>(SUBSCRIPTION_UPDATES.uncancel);
export const revokeUpdate = defineUpdate<ChangeAnswer, [CancelArgs]>(SUBSCRIPTION_UPDATES.revoke);
export const changeProductUpdate = defineUpdate<ChangeAnswer, [ChangeProductArgs]>(SUBSCRIPTION_UPDATES.changeProduct);

/** Each update name's definition, for callers typed by it. */
export interface SubscriptionUpdates {
  cancel: typeof cancelUpdate;
  uncancel: typeof uncancelUpdate;
  revoke: typeof revokeUpdate;
  changeProduct: typeof changeProductUpdate;
}

/** The refusal as the failure an update validator or handler throws (the update fails, not the workflow). */
export function refusalFailure(r: Refusal): ApplicationFailure {
  return ApplicationFailure.create({ message: r.message, type: r.type, nonRetryable: true, details: [{ status: r.status }] });
}
