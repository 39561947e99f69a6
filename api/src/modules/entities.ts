/** Every entity the ORM knows; deps.ts passes `allEntities` to `initOrm`. Add a module's entities here. */
import { Account, RateLimit, Session, User, Verification } from '../auth/entities.ts';
import { TwoFactor, TwoFactorBackupCode } from '../auth/two-factor/entities.ts';
import { Passkey } from '../auth/passkeys/entities.ts';
import { Invitation, Member, Organization, OrganizationAccessToken, Team } from './organizations/entities.ts';
import { Product, ProductBenefit, ProductCustomField, ProductMedia, ProductPrice } from './products/entities.ts';
import { Benefit } from './benefits/entities.ts';
import { BenefitGrant } from './benefits/grants.ts';
import { LicenseKey, LicenseKeyActivation } from './license-keys/entities.ts';
import { CustomField } from './custom-fields/entities.ts';
import { Notification } from './notifications/entities.ts';
import { webhookEntities } from './webhooks/entities.ts';
import { Customer } from './customers/entities.ts';
import { File } from './files/entities.ts';
import { Meter, MeterRollup, MeterRollupDay, MeterRollupMinute, MeterRollupTotal } from './meters/entities.ts';
import { Event } from './events/entities.ts';
import { Discount } from './discounts/entities.ts';
import { WorkflowStart } from '../kit/workflow-starts.ts';
import { CheckoutLink } from './checkout-links/entities.ts';
import { CustomerSession } from './customer-sessions/entities.ts';
import { ExternalOrganization, Repository } from './repositories/entities.ts';
import { sandboxEntities } from './payments/sandbox-entities.ts';
import { Checkout, CheckoutChargeAttempt, DiscountRedemption } from './checkouts/entities.ts';
import { Order } from './orders/entities.ts';
import { Subscription } from './subscriptions/entities.ts';
import { MeteredBilling } from './usage/entities.ts';
import { Pledge } from './pledges/entities.ts';
import { PaymentMethod } from './payment-methods/entities.ts';
import { TaxRate } from './tax-rates/entities.ts';
import { CustomerSessionCode } from './customer-portal/sign-in-entities.ts';
import { Refund } from './refunds/entities.ts';
import { oauth2Entities } from './oauth2/entities.ts';
import { IdempotencyKey } from './idempotency/entities.ts';
import { TrialRedemption } from './trials/entities.ts';

export const allEntities = [
  User, Account, Session, Verification, RateLimit,
  TwoFactor, TwoFactorBackupCode,
  Passkey,
  Organization, Member, OrganizationAccessToken, Team, Invitation,
  Product, ProductPrice, ProductBenefit, ProductMedia, ProductCustomField,
  Benefit, BenefitGrant, LicenseKey, LicenseKeyActivation, CustomField,
  Notification,
  ...webhookEntities,
  Customer,
  File,
  Meter,
  MeterRollup,
  MeterRollupTotal,
  MeterRollupDay,
  MeterRollupMinute,
  Event,
  Discount, CheckoutLink, CustomerSession, ExternalOrganization, Repository,
  ...sandboxEntities,
  Checkout, TaxRate,
  DiscountRedemption, CheckoutChargeAttempt, Order, Subscription, PaymentMethod,
  WorkflowStart,
  Refund,
  CustomerSessionCode,
  MeteredBilling,
  Pledge,
  ...oauth2Entities,
  IdempotencyKey,
  TrialRedemption,
];
