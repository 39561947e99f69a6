/**
 * The session customer's saved cards as the portal changes them: save one through the processor
 * (setup, no charge; the processor is called first, then the card is recorded in a transaction of its
 * own), make one the default, delete one (each in the caller's transaction with the customer row
 * locked; the caller detaches a deleted card at the processor after commit).
 */
import { randomUUID } from 'node:crypto';
import { inTransaction, type EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { Customer } from '../customers/entities.ts';
import { PaymentMethod } from '../payment-methods/entities.ts';
import { deletePaymentMethod, lockCustomerRow, savePaymentMethod, setDefaultPaymentMethod } from '../payment-methods/service.ts';
import { PaymentError, ProcessorError, type PaymentProcessor } from '../payments/processor.ts';

export async function addPaymentMethod(
  em: EntityManager,
  processor: PaymentProcessor,
  customerId: string,
  body: { confirmation_token_id: string; set_default: boolean },
): Promise<PaymentMethod> {
  // The processor is called with no transaction open (it may act before a commit or after a rollback);
  // the processor customer's idempotency key makes a retried request reuse it.
  const customer = await em.fork().findOne(Customer, { id: customerId, deletedAt: null });
  if (!customer) throw ResourceNotFound('Customer not found');
  let processorCustomerId = customer.processorCustomerId;
  if (!processorCustomerId) {
    const pc = await processor.createCustomer({
      email: customer.email,
      name: customer.name ?? null,
      idempotencyKey: `customer:${customer.id}:processor-customer`,
    });
    processorCustomerId = pc.id;
  }
  let setup;
  try {
    setup = await processor.setupPaymentMethod({
      confirmationTokenId: body.confirmation_token_id,
      processorCustomerId,
      idempotencyKey: `customer:${customer.id}:payment-method:${randomUUID()}`,
    });
  } catch (err) {
    if (err instanceof ProcessorError) throw PaymentError(err.message);
    throw err;
  }
  if (setup.status === 'declined') throw PaymentError(setup.message);
  const method = setup.paymentMethod;
  const { result } = await inTransaction(em, async (tx) => {
    await lockCustomerRow(tx, customerId);
    const locked = await tx.findOne(Customer, { id: customerId, deletedAt: null }, { refresh: true });
    if (!locked) throw ResourceNotFound('Customer not found');
    locked.processorCustomerId ??= processorCustomerId;
    const pm = await savePaymentMethod(tx, { customerId, processor: processor.name, method });
    if (body.set_default && !pm.isDefault) await setDefaultPaymentMethod(tx, pm);
    await tx.flush();
    return pm;
  });
  return result;
}

export async function makeDefaultPaymentMethod(tx: EntityManager, customerId: string, id: string): Promise<PaymentMethod> {
  await lockCustomerRow(tx, customerId);
  const pm = await tx.findOne(PaymentMethod, { id, customer: customerId, deletedAt: null });
  if (!pm) throw ResourceNotFound('Payment method not found');
  if (!pm.isDefault) await setDefaultPaymentMethod(tx, pm);
  await tx.flush();
  return pm;
}

export async function removePaymentMethod(tx: EntityManager, customerId: string, id: string): Promise<PaymentMethod> {
  const deleted = await deletePaymentMethod(tx, customerId, id);
  if (!deleted) throw ResourceNotFound('Payment method not found');
  await tx.flush();
  return deleted;
}
