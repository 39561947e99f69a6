/** Every workflow the worker runs. Bundled once (webpack) for the worker; no Node built-ins here. */
export { productCreatedWorkflow } from './products/product-created.workflow.ts';
export { outboxDispatcherWorkflow } from './webhooks/outbox-dispatcher.workflow.ts';
export { webhookDeliveryWorkflow } from './webhooks/webhook-delivery.workflow.ts';
export { checkoutExpiryWorkflow } from './checkouts/checkout-expiry.workflow.ts';
export { checkoutConfirmWorkflow } from './checkouts/checkout-confirm.workflow.ts';
