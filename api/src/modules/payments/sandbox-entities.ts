/**
 * State of the built-in sandbox processor: a stand-in for Stripe's test mode kept in its own
 * `sandbox_*` tables, as if it were a remote service (it commits independently of the caller).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

const created = { createdAt: p.datetime().onCreate(() => new Date()) };

export const CARD_OUTCOMES = [
  'succeed', 'generic_decline', 'insufficient_funds', 'expired_card', 'incorrect_cvc', 'charge_fails', 'test_mode_live_card',
] as const;
export type CardOutcome = (typeof CARD_OUTCOMES)[number];

export const SandboxConfirmationToken = defineEntity({
  name: 'SandboxConfirmationToken',
  tableName: 'sandbox_confirmation_tokens',
  properties: {
    id: p.string().primary(),
    brand: p.string(),
    last4: p.string(),
    expMonth: p.integer(),
    expYear: p.integer(),
    outcome: p.enum(CARD_OUTCOMES),
    usedAt: p.datetime().nullable(),
    ...created,
  },
});
export type SandboxConfirmationToken = InferEntity<typeof SandboxConfirmationToken>;

export const SandboxCustomer = defineEntity({
  name: 'SandboxCustomer',
  tableName: 'sandbox_customers',
  properties: {
    id: p.string().primary(),
    email: p.string(),
    name: p.string().nullable(),
    idempotencyKey: p.string().unique(),
    ...created,
  },
});

export const SandboxPaymentMethod = defineEntity({
  name: 'SandboxPaymentMethod',
  tableName: 'sandbox_payment_methods',
  properties: {
    id: p.string().primary(),
    customerId: p.string().index(),
    brand: p.string(),
    last4: p.string(),
    expMonth: p.integer(),
    expYear: p.integer(),
    outcome: p.enum(CARD_OUTCOMES),
    /** The setup (save) call that created it, for idempotency. */
    idempotencyKey: p.string().nullable().unique(),
    detachedAt: p.datetime().nullable(),
    ...created,
  },
});
export type SandboxPaymentMethod = InferEntity<typeof SandboxPaymentMethod>;

export const SandboxCharge = defineEntity({
  name: 'SandboxCharge',
  tableName: 'sandbox_charges',
  properties: {
    id: p.string().primary(),
    customerId: p.string().index(),
    paymentMethodId: p.string().nullable(),
    amount: p.integer(),
    currency: p.string().length(3),
    status: p.enum(['succeeded', 'failed'] as const),
    failureCode: p.string().nullable(),
    declineCode: p.string().nullable(),
    failureMessage: p.string().nullable(),
    refundedAmount: p.integer().default(0),
    idempotencyKey: p.string().unique(),
    metadata: p.json<Record<string, string>>(),
    ...created,
  },
});
export type SandboxCharge = InferEntity<typeof SandboxCharge>;

export const SandboxRefund = defineEntity({
  name: 'SandboxRefund',
  tableName: 'sandbox_refunds',
  properties: {
    id: p.string().primary(),
    chargeId: p.string().index(),
    amount: p.integer(),
    idempotencyKey: p.string().unique(),
    ...created,
  },
});

export const sandboxEntities = [SandboxConfirmationToken, SandboxCustomer, SandboxPaymentMethod, SandboxCharge, SandboxRefund];
