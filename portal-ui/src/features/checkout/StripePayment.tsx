/**
 * The card entry with PAYMENT_PROCESSOR=stripe: Stripe's Payment Element producing a confirmation
 * token, at the checkout (payment or setup) and in the portal's "Add a card" (setup; no `checkout`),
 * loaded only with the stripe processor, in its own chunk so the sandbox checkout never downloads
 * Stripe.js). Stripe.js must come from js.stripe.com
 * (Stripe's terms); when it cannot load, the form says so instead of spinning. Creating a token needs
 * Stripe itself, so the tests here (no route to js.stripe.com) cover the choice and the failure only.
 */
import { useEffect, useState, type MutableRefObject } from 'react';
import { Alert, Loading } from '../../components/ui.tsx';
import { loadStripe, type Stripe } from '@stripe/stripe-js';
import { Elements, PaymentElement, useElements, useStripe } from '@stripe/react-stripe-js';
import type { Address, Checkout } from '../../lib/types.ts';

export interface StripeHandle {
  createToken(billing: { name: string; email: string; address: Address }): Promise<string>;
}

const stripes = new Map<string, Promise<Stripe | null>>();

export default function StripePayment({
  publishableKey,
  checkout,
  handleRef,
}: {
  publishableKey: string;
  /** Omitted: saving a card for later (setup) in the portal. */
  checkout?: Checkout;
  handleRef: MutableRefObject<StripeHandle | null>;
}) {
  if (!stripes.has(publishableKey)) stripes.set(publishableKey, loadStripe(publishableKey).catch(() => null));
  const stripe = stripes.get(publishableKey)!;
  const [state, setState] = useState<'loading' | 'ready' | 'failed'>('loading');
  useEffect(() => {
    let live = true;
    void stripe.then((s) => live && setState(s ? 'ready' : 'failed'));
    return () => {
      live = false;
    };
  }, [stripe]);
  const options = checkout?.is_payment_required
    ? { mode: 'payment' as const, amount: checkout.total_amount ?? 0, currency: (checkout.currency ?? 'usd').toLowerCase(), setupFutureUsage: checkout.is_payment_setup_required ? ('off_session' as const) : undefined }
    : { mode: 'setup' as const, currency: (checkout?.currency ?? 'usd').toLowerCase() };
  return (
    <fieldset className="card-fields">
      <legend>Card</legend>
      {state === 'failed' ? (
        <Alert>
          The secure card form could not be loaded from Stripe (js.stripe.com). Check your connection or turn off blockers for this page,
          then reload it. Nothing has been charged.
        </Alert>
      ) : state === 'loading' ? (
        <Loading label="Loading the secure card form…" />
      ) : (
        <Elements stripe={stripe} options={{ ...options, paymentMethodCreation: 'manual' }}>
          <Handle handleRef={handleRef} />
          <PaymentElement options={{ fields: { billingDetails: { name: 'never', email: 'never', address: 'never' } } }} />
        </Elements>
      )}
    </fieldset>
  );
}

function Handle({ handleRef }: { handleRef: MutableRefObject<StripeHandle | null> }) {
  const stripe = useStripe();
  const elements = useElements();
  useEffect(() => {
    if (!stripe || !elements) return;
    handleRef.current = {
      async createToken({ name, email, address }) {
        const submitted = await elements.submit();
        if (submitted.error) throw new Error(submitted.error.message ?? 'Check your card details.');
        const { error, confirmationToken } = await stripe.createConfirmationToken({
          elements,
          params: {
            payment_method_data: {
              billing_details: {
                name,
                email,
                address: {
                  country: address.country,
                  line1: address.line1 ?? '',
                  line2: address.line2 ?? '',
                  city: address.city ?? '',
                  postal_code: address.postal_code ?? '',
                  state: address.state ?? '',
                },
              },
            },
          },
        });
        if (error) throw new Error(error.message ?? 'Your card could not be used.');
        return confirmationToken.id;
      },
    };
    return () => {
      handleRef.current = null;
    };
  }, [stripe, elements, handleRef]);
  return null;
}
