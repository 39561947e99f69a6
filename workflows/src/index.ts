/** Every workflow the worker runs. Bundled once (webpack) for the worker; no Node built-ins here. */
export { productCreatedWorkflow } from './products/product-created.workflow.ts';
export { outboxDispatcherWorkflow } from './webhooks/outbox-dispatcher.workflow.ts';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.workflow.ts';
export { checkoutExpirySweeperWorkflow } from './checkouts/checkout-expiry-sweeper.workflow.ts';
export { checkoutConfirmWorkflow } from './checkouts/checkout-confirm.workflow.ts';
export { refundWorkflow } from './refunds/refund.workflow.ts';
export { benefitGrantWorkflow } from './benefits/benefit-grant.workflow.ts';
export { benefitRequestsWorkflow } from './benefits/benefit-requests.workflow.ts';
export { subscriptionWorkflow } from './subscriptions/subscription.workflow.ts';
export { productBenefitsWorkflow } from './products/product-benefits.workflow.ts';
