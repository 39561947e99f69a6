/** Every module's routes, in one place: app.ts mounts `allRoutes`. Each module owns its own `routes.ts`. */
import type { RouteSpec } from '../kit/routes.ts';
import { routes as webhookRoutes } from './webhooks/routes.ts';
import { organizationRoutes } from './organizations/routes.ts';
import { productRoutes } from './products/routes.ts';
import { routes as benefitRoutes } from './benefits/routes.ts';
import { routes as customFieldRoutes } from './custom-fields/routes.ts';
import { routes as licenseKeyRoutes } from './license-keys/routes.ts';
import { routes as discountRoutes } from './discounts/routes.ts';
import { routes as checkoutLinkRoutes } from './checkout-links/routes.ts';
import { routes as customerRoutes } from './customers/routes.ts';
import { routes as customerSessionRoutes } from './customer-sessions/routes.ts';
import { routes as fileRoutes } from './files/routes.ts';
import { routes as meterRoutes } from './meters/routes.ts';
import { routes as eventRoutes } from './events/routes.ts';
import { routes as metricsRoutes } from './metrics/routes.ts';
import { routes as repositoryRoutes } from './repositories/routes.ts';
import { routes as sandboxRoutes } from './payments/routes.ts';
import { routes as usageRoutes } from './usage/routes.ts';
import { routes as pledgeRoutes } from './pledges/routes.ts';
import { routes as orderRoutes } from './orders/routes.ts';
import { routes as subscriptionRoutes } from './subscriptions/routes.ts';
import { portalSubscriptionRoutes } from './subscriptions/portal-routes.ts';
import { routes as checkoutRoutes } from './checkouts/routes.ts';
import { routes as taxRateRoutes } from './tax-rates/routes.ts';
import { routes as customerPortalRoutes } from './customer-portal/routes.ts';
import { routes as customerPortalOrderRoutes } from './customer-portal/orders.ts';
import { routes as customerPortalPaymentMethodRoutes } from './customer-portal/payment-methods.ts';
import { routes as customerPortalDownloadableRoutes } from './customer-portal/downloadables.ts';
import { routes as customerPortalSignInRoutes } from './customer-portal/sign-in.ts';
import { routes as customerPortalMeterRoutes } from './customer-portal/meters.ts';
import { routes as refundRoutes } from './refunds/routes.ts';
import { routes as operationsRoutes } from './operations/routes.ts';
import { routes as oauth2Routes } from './oauth2/routes.ts';

export const allRoutes: RouteSpec[] = [
  ...organizationRoutes,
  ...productRoutes,
  ...benefitRoutes,
  ...customFieldRoutes,
  ...licenseKeyRoutes,
  ...discountRoutes,
  ...checkoutLinkRoutes,
  ...customerRoutes,
  ...customerSessionRoutes,
  ...fileRoutes,
  ...meterRoutes,
  ...eventRoutes,
  ...metricsRoutes,
  ...repositoryRoutes,
  ...sandboxRoutes,
  ...webhookRoutes,
  ...checkoutRoutes,
  ...taxRateRoutes,
  ...customerPortalRoutes,
  ...customerPortalOrderRoutes,
  ...customerPortalPaymentMethodRoutes,
  ...customerPortalDownloadableRoutes,
  ...customerPortalSignInRoutes,
  ...customerPortalMeterRoutes,
  ...orderRoutes,
  ...subscriptionRoutes,
  ...portalSubscriptionRoutes,
  ...refundRoutes,
  ...usageRoutes,
  ...pledgeRoutes,
  ...operationsRoutes,
  ...oauth2Routes,
];
