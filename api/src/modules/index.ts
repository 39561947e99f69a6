/**
 * Every module's routes and entities, in one place: app.ts mounts `allRoutes`, the ORM loads
 * `allEntities`. Each module owns its own `routes.ts` and `entities.ts`.
 */
import type { RouteSpec } from '../kit/routes.ts';
import { Account, RateLimit, Session, User, Verification } from '../auth/entities.ts';
import { Invitation, Member, Organization, OrganizationAccessToken, Team } from './organizations/entities.ts';
import { Product, ProductBenefit, ProductCustomField, ProductMedia, ProductPrice } from './products/entities.ts';
import { Benefit } from './benefits/entities.ts';
import { BenefitGrant } from './benefits/grants.ts';
import { LicenseKey, LicenseKeyActivation } from './license-keys/entities.ts';
import { CustomField } from './custom-fields/entities.ts';
import { Notification } from './notifications/entities.ts';
import { webhookEntities } from './webhooks/entities.ts';
import { routes as webhookRoutes } from './webhooks/routes.ts';
import { Customer } from './customers/entities.ts';
import { File } from './files/entities.ts';
import { Meter, MeterRollup } from './meters/entities.ts';
import { Event } from './events/entities.ts';
import { Discount } from './discounts/entities.ts';
import { WorkflowStart } from '../kit/workflow-starts.ts';
import { CheckoutLink } from './checkout-links/entities.ts';
import { CustomerSession } from './customer-sessions/entities.ts';
import { ExternalOrganization, Repository } from './repositories/entities.ts';
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
import { sandboxEntities } from './payments/sandbox-entities.ts';
import { Checkout, CheckoutChargeAttempt, DiscountRedemption } from './checkouts/entities.ts';
import { Order } from './orders/entities.ts';
import { Subscription } from './subscriptions/entities.ts';
import { MeteredBilling } from './usage/entities.ts';
import { routes as usageRoutes } from './usage/routes.ts';
import { PaymentMethod } from './payment-methods/entities.ts';
import { routes as orderRoutes } from './orders/routes.ts';
import { routes as subscriptionRoutes } from './subscriptions/routes.ts';
import { portalSubscriptionRoutes } from './subscriptions/portal-routes.ts';
import { TaxRate } from './tax-rates/entities.ts';
import { routes as checkoutRoutes } from './checkouts/routes.ts';
import { routes as taxRateRoutes } from './tax-rates/routes.ts';
import { routes as customerPortalRoutes } from './customer-portal/routes.ts';
import { routes as customerPortalOrderRoutes } from './customer-portal/orders.ts';
import { routes as customerPortalPaymentMethodRoutes } from './customer-portal/payment-methods.ts';
import { routes as customerPortalDownloadableRoutes } from './customer-portal/downloadables.ts';
import { routes as customerPortalSignInRoutes } from './customer-portal/sign-in.ts';
import { CustomerSessionCode } from './customer-portal/sign-in-entities.ts';
import { Refund } from './refunds/entities.ts';
import { routes as refundRoutes } from './refunds/routes.ts';
import { routes as operationsRoutes } from './operations/routes.ts';

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
  ...orderRoutes,
  ...subscriptionRoutes,
  ...portalSubscriptionRoutes,
  ...refundRoutes,
  ...usageRoutes,
  ...operationsRoutes,
];

// Module entity lists: add a module's entities here when it defines new ones.
export const allEntities = [
  User, Account, Session, Verification, RateLimit,
  Organization, Member, OrganizationAccessToken, Team, Invitation,
  Product, ProductPrice, ProductBenefit, ProductMedia, ProductCustomField,
  Benefit, BenefitGrant, LicenseKey, LicenseKeyActivation, CustomField,
  Notification,
  ...webhookEntities,
  Customer,
  File,
  Meter,
  MeterRollup,
  Event,
  Discount, CheckoutLink, CustomerSession, ExternalOrganization, Repository,
  ...sandboxEntities,
  Checkout, TaxRate,
  DiscountRedemption, CheckoutChargeAttempt, Order, Subscription, PaymentMethod,
  WorkflowStart,
  Refund,
  CustomerSessionCode,
  MeteredBilling,
];
