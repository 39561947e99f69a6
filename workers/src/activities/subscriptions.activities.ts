/**
 * The steps of the `subscription:<id>` workflow: read its schedule, end or renew it at period end,
 * charge a subscription order off-session, give up (unpaid), build the dunning mail, and apply the
 * seller's and customer's changes. Each runs on its own EntityManager fork (see
 * subscriptions/service.ts). A broken business rule (ApiError) fails the activity for good, carrying
 * the error's name and status so the API can answer it in the documented shape.
 */
import { ApplicationFailure } from '@temporalio/activity';
import type { Deps } from '@emporia/api/src/deps.ts';
import type { SubscriptionActivities } from '@emporia/workflows/contracts';
import { inTransaction, type EntityManager } from '@emporia/api/src/kit/db.ts';
import { ApiError, RequestValidationError } from '@emporia/api/src/kit/errors.ts';
import {
  applyCancel,
  applyProductChange,
  applyRevoke,
  applyUncancel,
  chargeSubscriptionOrder,
  dunningMail,
  markUnpaid,
  renewAndChargeSubscription,
  renewSubscription,
  subscriptionSchedule,
  type CancelInput,
  type ProductChangeInput,
} from '@emporia/api/src/modules/subscriptions/service.ts';

async function rules<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof ApiError) {
      const issues = err instanceof RequestValidationError ? err.issues : null;
      throw ApplicationFailure.nonRetryable(err.detail, err.error, { status: err.status, issues });
    }
    throw err;
  }
}

export function createSubscriptionActivities(deps: Pick<Deps, 'orm' | 'cfg' | 'processor'>): SubscriptionActivities {
  const { orm, cfg } = deps;
  const processor = () => deps.processor;
  const usage = { settleMs: (cfg.USAGE_SETTLE_SECONDS ?? 10) * 1000 };
  /** One transaction per step, opened here: the service works inside it. */
  const inTx = async <T>(work: (tx: EntityManager) => Promise<T>) => (await inTransaction(orm.em.fork(), work)).result;
  return {
    async subscriptionSchedule(subscriptionId: string) {
      return subscriptionSchedule(orm.em.fork(), subscriptionId);
    },
    async renewSubscription(subscriptionId: string, expectedPeriodEnd: string) {
      return inTx((tx) => renewSubscription(tx, subscriptionId, expectedPeriodEnd, usage));
    },
    /** The period-end step and the first charge of its order in one go (the common path of a renewal). */
    async renewAndCharge(subscriptionId: string, expectedPeriodEnd: string) {
      return renewAndChargeSubscription(orm.em.fork(), processor(), subscriptionId, expectedPeriodEnd, usage);
    },
    async chargeSubscriptionOrder(orderId: string, attempt: number) {
      return chargeSubscriptionOrder(orm.em.fork(), processor(), orderId, attempt);
    },
    async markSubscriptionUnpaid(subscriptionId: string, atIso: string) {
      return inTx((tx) => markUnpaid(tx, subscriptionId, new Date(atIso)));
    },
    async subscriptionDunningMail(orderId: string, attempt: number, nextRetryAt: string | null, reason: string | null) {
      return dunningMail(orm.em.fork(), orderId, { attempt, nextRetryAt, reason, portalUrl: cfg.PUBLIC_URL });
    },
    async cancelSubscription(subscriptionId: string, input: CancelInput, atIso: string) {
      return rules(() => inTx((tx) => applyCancel(tx, subscriptionId, input, new Date(atIso))));
    },
    async uncancelSubscription(subscriptionId: string) {
      return rules(() => inTx((tx) => applyUncancel(tx, subscriptionId)));
    },
    async revokeSubscription(subscriptionId: string, input: CancelInput, atIso: string) {
      return rules(() => inTx((tx) => applyRevoke(tx, subscriptionId, input, new Date(atIso), usage)));
    },
    async changeSubscriptionProduct(subscriptionId: string, input: ProductChangeInput, atIso: string) {
      return rules(() => inTx((tx) => applyProductChange(tx, subscriptionId, input, new Date(atIso))));
    },
  };
}

export type { SubscriptionActivities };
