/**
 * Step 2 of the confirmation (confirm.ts): the processor's calls, outside any transaction and holding
 * no connection of the caller's pool; the charge attempt is written before the call.
 */
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '../../kit/db.ts';
import type { PaymentProcessor } from '../payments/index.ts';
import { PaymentError, ProcessorError, type ProcessorPaymentMethod } from '../payments/processor.ts';
import type { ChargeRequest } from './entities.ts';
import { chargeKey, settleAttempt } from './charge-attempts.ts';

/** What step 1 hands to the charge. */
export interface ChargeInput {
  checkoutId: string;
  tokenId: string | null;
  email: string;
  name: string | null;
  processorCustomerId: string | null;
  totalAmount: number | null;
  currency: string | null;
  paymentRequired: boolean;
  setupRequired: boolean;
  recurring: boolean;
  chargeAttempt: number;
}

export interface Charged {
  processorCustomerId: string | null;
  chargeId: string | null;
  savedMethod: ProcessorPaymentMethod | null;
}

/** Step 2: the processor calls, holding no database connection of the caller's pool. */
export async function charge(em: EntityManager, processor: PaymentProcessor, p: ChargeInput): Promise<Charged> {
  if (!p.paymentRequired && !p.setupRequired) return { processorCustomerId: p.processorCustomerId, chargeId: null, savedMethod: null };
  try {
    const processorCustomerId =
      p.processorCustomerId ??
      (await processor.createCustomer({ email: p.email, name: p.name, idempotencyKey: `checkout:${p.checkoutId}:customer:${p.email}` })).id;
    if (p.paymentRequired) {
      const request: ChargeRequest = {
        amount: p.totalAmount!,
        currency: p.currency!,
        confirmationTokenId: p.tokenId!,
        processorCustomerId,
        savePaymentMethod: p.recurring,
        idempotencyKey: chargeKey(p.checkoutId, p.tokenId!, p.chargeAttempt),
        metadata: { checkout_id: p.checkoutId },
      };
      // Written before the call: should this process die before the outcome is recorded, the sweeper
      // finds the attempt pending and settles it (settleAbandonedCharges). A retry with the same key
      // keeps the first row.
      await em
        .fork()
        .execute(
          `insert into "checkout_charge_attempts" ("id", "checkout_id", "idempotency_key", "request", "status", "created_at")
           values (?, ?, ?, ?::jsonb, 'pending', now()) on conflict ("idempotency_key") do nothing`,
          [randomUUID(), p.checkoutId, request.idempotencyKey, JSON.stringify(request)],
        );
      const result = await processor.confirmPayment(request);
      if (result.status === 'declined') {
        await settleAttempt(em.fork(), request.idempotencyKey, 'declined', result.chargeId);
        throw PaymentError(result.message);
      }
      return { processorCustomerId, chargeId: result.chargeId, savedMethod: p.recurring ? result.paymentMethod : null };
    }
    const result = await processor.setupPaymentMethod({
      confirmationTokenId: p.tokenId!,
      processorCustomerId,
      idempotencyKey: `checkout:${p.checkoutId}:setup:${p.tokenId}`,
    });
    if (result.status === 'declined') throw PaymentError(result.message);
    return { processorCustomerId, chargeId: null, savedMethod: result.paymentMethod };
  } catch (err) {
    if (err instanceof ProcessorError) throw PaymentError(err.message);
    throw err;
  }
}
