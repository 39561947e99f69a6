/**
 * Deterministic workflow ids from business keys: starting the same process twice is a no-op.
 * Plain functions with no Temporal imports, so the API can use them too.
 */
export const productCreatedWorkflowId = (productId: string) => `product-created:${productId}`;
/** One dispatcher per task queue fans the outbox out to webhook endpoints and makes first attempts. */
export const outboxDispatcherWorkflowId = (taskQueue: string) => `webhook-dispatcher:${taskQueue}`;
/** Deliveries one of the dispatcher's first-attempt batches claims (the workflow plans batches by it). */
export const WEBHOOK_FIRST_ATTEMPT_BATCH = 100;
export const webhookDeliveryWorkflowId = (outboxEventId: string, endpointId: string) =>
  `webhook-delivery:${outboxEventId}:${endpointId}`;
/** Grants / revocations that follow one change of a product's benefits (`changeId`: unique per change). */
export const productBenefitsWorkflowId = (productId: string, changeId: string) => `product-benefits:${productId}:${changeId}`;
/** One checkout-expiry sweeper per task queue, started by the worker. */
export const checkoutExpirySweeperWorkflowId = (taskQueue: string) => `checkout-expiry:${taskQueue}`;
/** Fulfilment of one confirmed checkout: order, subscription, benefits, receipt. */
export const checkoutConfirmWorkflowId = (checkoutId: string) => `checkout-confirm:${checkoutId}`;
/** Processor refund, order settlement and optional benefit revocation of one refund. */
export const refundWorkflowId = (refundId: string) => `refund:${refundId}`;
/** Grants and revocations of one benefit for one customer, processed in order. */
/** Queues the benefit-grant requests one committed change calls for (a customer deleted, a benefit changed). */
export const benefitRequestsWorkflowId = (requestId: string) => `benefit-requests:${requestId}`;
export const benefitGrantWorkflowId = (benefitId: string, customerId: string) => `benefit-grant:${benefitId}:${customerId}`;
/** The lifecycle of one subscription (renewals, dunning, cancel / uncancel / revoke / product change). */
export const subscriptionWorkflowId = (subscriptionId: string) => `subscription:${subscriptionId}`;
/** Names of the subscription workflow's updates, which the API executes. */
/** Signal to `subscription:<id>`: its period changed outside the workflow (an upgrade checkout); re-read it. */
export const SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL = 'subscriptionScheduleChanged';
export const SUBSCRIPTION_UPDATES = {
  cancel: 'cancelSubscription',
  uncancel: 'uncancelSubscription',
  revoke: 'revokeSubscription',
  changeProduct: 'changeSubscriptionProduct',
} as const;
