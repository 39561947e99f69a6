/**
 * The Stripe adapter, over the official `stripe` SDK. Production uses api.stripe.com; tests point it
 * at a local HTTP server that speaks the Stripe endpoints used here (STRIPE_API_BASE).
 */
import Stripe from 'stripe';
import type { ChargeResult, PaymentProcessor, ProcessorPaymentMethod } from './processor.ts';
import { ProcessorError } from './processor.ts';

function card(pm: Stripe.PaymentMethod): ProcessorPaymentMethod {
  return {
    id: pm.id,
    brand: pm.card?.brand ?? 'unknown',
    last4: pm.card?.last4 ?? '',
    expMonth: pm.card?.exp_month ?? 0,
    expYear: pm.card?.exp_year ?? 0,
    wallet: pm.card?.wallet?.type ?? null,
  };
}

function declined(err: unknown): Extract<ChargeResult, { status: 'declined' }> {
  if (err instanceof Stripe.errors.StripeCardError) {
    const pi = (err.raw as { payment_intent?: { latest_charge?: string | null } }).payment_intent;
    return {
      status: 'declined',
      chargeId: pi?.latest_charge ?? null,
      code: err.code ?? 'card_declined',
      declineCode: err.decline_code ?? err.code ?? 'generic_decline',
      message: err.message,
    };
  }
  if (err instanceof Stripe.errors.StripeError) throw new ProcessorError(err.message, err.code ?? err.type);
  throw err;
}

export function createStripeProcessor(opts: { secretKey: string; apiBase?: string }): PaymentProcessor {
  const base = opts.apiBase ? new URL(opts.apiBase) : undefined;
  const stripe = new Stripe(opts.secretKey, {
    maxNetworkRetries: 2,
    ...(base
      ? {
          host: base.hostname,
          port: base.port || (base.protocol === 'https:' ? 443 : 80),
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
  });

  async function paymentMethodOf(pi: Stripe.PaymentIntent): Promise<ProcessorPaymentMethod> {
    const pm = pi.payment_method;
    if (pm && typeof pm === 'object') return card(pm);
    if (typeof pm === 'string') return card(await stripe.paymentMethods.retrieve(pm));
    throw new ProcessorError('Payment intent has no payment method', 'payment_method_missing');
  }

  async function settle(create: () => Promise<Stripe.PaymentIntent>): Promise<ChargeResult> {
    let pi: Stripe.PaymentIntent;
    try {
      pi = await create();
    } catch (err) {
      return declined(err);
    }
    const chargeId = typeof pi.latest_charge === 'string' ? pi.latest_charge : (pi.latest_charge?.id ?? null);
    if (pi.status !== 'succeeded' || !chargeId) {
      return {
        status: 'declined',
        chargeId,
        code: pi.last_payment_error?.code ?? 'payment_intent_unexpected_state',
        declineCode: pi.last_payment_error?.decline_code ?? 'generic_decline',
        message: pi.last_payment_error?.message ?? `Payment ${pi.status}`,
      };
    }
    return { status: 'succeeded', chargeId, paymentMethod: await paymentMethodOf(pi) };
  }

  return {
    name: 'stripe',

    async createCustomer({ email, name, idempotencyKey }) {
      const c = await stripe.customers.create({ email, ...(name ? { name } : {}) }, { idempotencyKey });
      return { id: c.id };
    },

    confirmPayment(input) {
      return settle(() =>
        stripe.paymentIntents.create(
          {
            amount: input.amount,
            currency: input.currency,
            customer: input.processorCustomerId,
            confirm: true,
            confirmation_token: input.confirmationTokenId,
            ...(input.savePaymentMethod ? { setup_future_usage: 'off_session' as const } : {}),
            metadata: input.metadata ?? {},
            expand: ['payment_method'],
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
    },

    async setupPaymentMethod({ confirmationTokenId, processorCustomerId, idempotencyKey }) {
      try {
        const si = await stripe.setupIntents.create(
          {
            customer: processorCustomerId,
            confirm: true,
            confirmation_token: confirmationTokenId,
            usage: 'off_session',
            expand: ['payment_method'],
          },
          { idempotencyKey },
        );
        const pm = si.payment_method;
        const method = pm && typeof pm === 'object' ? pm : await stripe.paymentMethods.retrieve(String(pm));
        return { status: 'succeeded', paymentMethod: card(method) };
      } catch (err) {
        return declined(err);
      }
    },

    chargeOffSession(input) {
      return settle(() =>
        stripe.paymentIntents.create(
          {
            amount: input.amount,
            currency: input.currency,
            customer: input.processorCustomerId,
            payment_method: input.paymentMethodId,
            off_session: true,
            confirm: true,
            metadata: input.metadata ?? {},
            expand: ['payment_method'],
          },
          { idempotencyKey: input.idempotencyKey },
        ),
      );
    },

    async refund({ chargeId, amount, idempotencyKey }) {
      try {
        const r = await stripe.refunds.create({ charge: chargeId, amount }, { idempotencyKey });
        if (r.status === 'failed' || r.status === 'canceled') throw new ProcessorError(`Refund ${r.status}`, 'refund_failed');
        return { refundId: r.id, status: 'succeeded' };
      } catch (err) {
        if (err instanceof Stripe.errors.StripeError) throw new ProcessorError(err.message, err.code ?? err.type);
        throw err;
      }
    },

    async detachPaymentMethod(paymentMethodId) {
      await stripe.paymentMethods.detach(paymentMethodId);
    },
  };
}
