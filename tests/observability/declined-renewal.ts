/**
 * Makes a subscription's next renewal decline now: the customer's default card becomes the sandbox's
 * `tok_chargeCustomerFail` (declines off-session) and the period ends in a second; the workflow, told
 * its schedule changed, renews at once and the charge is declined (past_due, dunning).
 */
import { randomUUID } from 'node:crypto';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL, subscriptionWorkflowId } from '../../workflows/src/ids.ts';
import type { TestServer } from '../harness.ts';

export async function declineRenewalNow(srv: TestServer, customerId: string, subscriptionId: string): Promise<void> {
  const em = srv.deps.orm.em.fork();
  const customer = await em.findOneOrFail(Customer, { id: customerId });
  const processor = srv.deps.processor;
  const saved = await processor.setupPaymentMethod({
    confirmationTokenId: 'tok_chargeCustomerFail',
    processorCustomerId: customer.processorCustomerId!,
    idempotencyKey: `declining-pm:${randomUUID()}`,
  });
  if (saved.status !== 'succeeded') throw new Error(`payment method: ${saved.status}`);
  await em.nativeUpdate(PaymentMethod, { customer: customerId }, { isDefault: false });
  em.create(PaymentMethod, {
    customer,
    processor: processor.name,
    processorId: saved.paymentMethod.id,
    brand: saved.paymentMethod.brand,
    last4: saved.paymentMethod.last4,
    expMonth: saved.paymentMethod.expMonth,
    expYear: saved.paymentMethod.expYear,
    wallet: null,
    isDefault: true,
    deletedAt: null,
  });
  await em.flush();
  await em.nativeUpdate(Subscription, { id: subscriptionId }, { currentPeriodEnd: new Date(Date.now() + 1000) });
  await srv.deps.temporal.workflow.getHandle(subscriptionWorkflowId(subscriptionId)).signal(SUBSCRIPTION_SCHEDULE_CHANGED_SIGNAL);
}
