/** All activities, built from their dependencies. */
import type { Deps } from '@emporia/api/src/deps.ts';
import { createNotificationActivities } from './notifications.activities.ts';
import { createWebhookActivities } from './webhooks.activities.ts';
import { createCheckoutActivities } from './checkouts.activities.ts';
import { createCheckoutConfirmActivities } from './checkout-confirm.activities.ts';
import { createBenefitActivities } from './benefits.activities.ts';
import { createRefundActivities } from './refunds.activities.ts';
import { createSubscriptionActivities } from './subscriptions.activities.ts';
import { createProductBenefitsActivities } from './product-benefits.activities.ts';

export function createActivities(deps: Deps) {
  return {
    ...createNotificationActivities(deps),
    ...createWebhookActivities(deps),
    ...createCheckoutActivities(deps),
    ...createCheckoutConfirmActivities(deps),
    ...createBenefitActivities(deps),
    ...createRefundActivities(deps),
    ...createSubscriptionActivities(deps),
    ...createProductBenefitsActivities(deps),
  };
}
