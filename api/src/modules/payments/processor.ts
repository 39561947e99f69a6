/**
 * One card-processor interface with two implementations: the built-in sandbox (default everywhere;
 * behaves like Stripe's test mode) and a Stripe adapter for production. Amounts are integers in minor
 * units. Every money-moving call takes an idempotency key: repeating it returns the first result.
 */
import { ApiError } from '../../kit/errors.ts';

export interface CardDetails {
  brand: string;
  last4: string;
  expMonth: number;
  expYear: number;
  wallet: string | null;
}

export interface ProcessorPaymentMethod extends CardDetails {
  id: string;
}

export type ChargeResult =
  | { status: 'succeeded'; chargeId: string; paymentMethod: ProcessorPaymentMethod }
  | { status: 'declined'; chargeId: string | null; code: string; declineCode: string; message: string };

/** An on-session charge: what `confirmPayment` takes (and a checkout's charge attempt stores to ask again). */
export interface ConfirmPaymentInput {
  amount: number;
  currency: string;
  confirmationTokenId: string;
  processorCustomerId: string;
  savePaymentMethod: boolean;
  idempotencyKey: string;
  metadata?: Record<string, string>;
}

export interface PaymentProcessor {
  readonly name: 'sandbox' | 'stripe';
  /** The processor-side customer that saved cards hang off. */
  createCustomer(input: { email: string; name: string | null; idempotencyKey: string }): Promise<{ id: string }>;
  /** Charges a card given by a confirmation token (on-session); optionally saves it for later. */
  confirmPayment(input: ConfirmPaymentInput): Promise<ChargeResult>;
  /** Saves a card without charging it (setup intent). */
  setupPaymentMethod(input: {
    confirmationTokenId: string;
    processorCustomerId: string;
    idempotencyKey: string;
  }): Promise<{ status: 'succeeded'; paymentMethod: ProcessorPaymentMethod } | Extract<ChargeResult, { status: 'declined' }>>;
  /** Charges a saved card without the customer present (renewals). */
  chargeOffSession(input: {
    amount: number;
    currency: string;
    paymentMethodId: string;
    processorCustomerId: string;
    idempotencyKey: string;
    metadata?: Record<string, string>;
  }): Promise<ChargeResult>;
  refund(input: { chargeId: string; amount: number; idempotencyKey: string }): Promise<{ refundId: string; status: 'succeeded' }>;
  detachPaymentMethod(paymentMethodId: string): Promise<void>;
}

export class ProcessorError extends Error {
  constructor(
    message: string,
    public readonly code: string,
  ) {
    super(message);
    this.name = 'ProcessorError';
  }
}

/** A charge or card setup the processor refused, as the API answers it (400 `PaymentError`). */
export const PaymentError = (detail: string) => new ApiError(400, 'PaymentError', detail);
