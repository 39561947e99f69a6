/** All activities, built from their dependencies. */
import type { Deps } from '@emporia/api/src/deps.ts';
import { createIntegrations } from '@emporia/api/src/modules/benefits/integrations.ts';
import { createNotificationActivities } from './notifications.activities.ts';
import { createWebhookActivities } from './webhooks.activities.ts';
import { createCheckoutActivities } from './checkouts.activities.ts';
import { createCheckoutConfirmActivities } from './checkout-confirm.activities.ts';
import { createBenefitActivities } from './benefits.activities.ts';
import { createRefundActivities } from './refunds.activities.ts';
import { createSubscriptionActivities } from './subscriptions.activities.ts';
import { createProductBenefitsActivities } from './product-benefits.activities.ts';

export function createActivities(deps: Deps) {
  const integrations = createIntegrations(deps.cfg);
  return {
    ...createNotificationActivities(deps),
    ...createWebhookActivities(deps),
    ...createCheckoutActivities(deps),
    ...createCheckoutConfirmActivities(deps, integrations),
    ...createBenefitActivities(deps, integrations),
    ...createRefundActivities(deps),
    ...createSubscriptionActivities(deps),
    ...createProductBenefitsActivities(deps),
  };
}
