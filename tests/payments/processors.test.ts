/**
 * The processor contract, run against both implementations: the built-in sandbox and the Stripe
 * adapter (the real `stripe` SDK talking to a local server that speaks Stripe's protocol).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxProcessor } from '../../api/src/modules/payments/sandbox.ts';
import { createStripeProcessor } from '../../api/src/modules/payments/stripe.ts';
import type { PaymentProcessor } from '../../api/src/modules/payments/processor.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeStripe, type FakeStripe } from '../fakes/stripe-server.ts';

let srv: TestServer;
let fake: FakeStripe;
const processors: Record<string, PaymentProcessor> = {};
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  fake = await startFakeStripe();
  processors.sandbox = createSandboxProcessor(srv.deps.orm);
  processors.stripe = createStripeProcessor({ secretKey: fake.secretKey, apiBase: fake.url });
});
afterAll(async () => {
  await fake?.close();
  await srv?.close();
});

const key = () => randomUUID();

describe.each(['sandbox', 'stripe'])('%s processor', (name) => {
  const p = () => processors[name]!;
  const customer = () => p().createCustomer({ email: 'buyer@example.com', name: 'Buyer', idempotencyKey: key() });

  it('charges a good card, saves it, and charges it again off-session', async () => {
    const c = await customer();
    const first = await p().confirmPayment({
      amount: 1900, currency: 'usd', confirmationTokenId: 'tok_visa', processorCustomerId: c.id, savePaymentMethod: true, idempotencyKey: key(),
    });
    expect(first).toMatchObject({ status: 'succeeded', paymentMethod: { brand: 'visa', last4: '4242' } });
    if (first.status !== 'succeeded') throw new Error('unreachable');
    expect(first.chargeId).toMatch(/^ch_/);
    const renewal = await p().chargeOffSession({
      amount: 1900, currency: 'usd', paymentMethodId: first.paymentMethod.id, processorCustomerId: c.id, idempotencyKey: key(),
    });
    expect(renewal.status).toBe('succeeded');
  });

  it('reports declines with their Stripe code, decline code and message', async () => {
    const c = await customer();
    for (const [token, declineCode, message] of [
      ['tok_chargeDeclined', 'generic_decline', 'Your card was declined.'],
      ['tok_chargeDeclinedInsufficientFunds', 'insufficient_funds', 'Your card has insufficient funds.'],
    ] as const) {
      const r = await p().confirmPayment({
        amount: 500, currency: 'usd', confirmationTokenId: token, processorCustomerId: c.id, savePaymentMethod: true, idempotencyKey: key(),
      });
      expect(r).toMatchObject({ status: 'declined', code: 'card_declined', declineCode, message });
    }
  });

  it('replays the first answer for a repeated idempotency key', async () => {
    const c = await customer();
    const input = { amount: 700, currency: 'usd', confirmationTokenId: 'tok_mastercard', processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key() };
    const a = await p().confirmPayment(input);
    const b = await p().confirmPayment(input);
    expect(a.status).toBe('succeeded');
    expect(b.chargeId).toBe(a.chargeId);
  });

  it('refunds in parts up to the charged amount and refuses more', async () => {
    const c = await customer();
    const paid = await p().confirmPayment({
      amount: 1000, currency: 'eur', confirmationTokenId: 'tok_visa', processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key(),
    });
    const chargeId = paid.chargeId!;
    await expect(p().refund({ chargeId, amount: 600, idempotencyKey: key() })).resolves.toMatchObject({ status: 'succeeded' });
    await expect(p().refund({ chargeId, amount: 500, idempotencyKey: key() })).rejects.toMatchObject({ code: 'amount_too_large' });
    await expect(p().refund({ chargeId, amount: 400, idempotencyKey: key() })).resolves.toMatchObject({ status: 'succeeded' });
  });

  it('saves a card whose later off-session charges fail, and forgets a detached card', async () => {
    const c = await customer();
    const setup = await p().setupPaymentMethod({ confirmationTokenId: 'tok_chargeCustomerFail', processorCustomerId: c.id, idempotencyKey: key() });
    if (setup.status !== 'succeeded') throw new Error(`setup failed: ${JSON.stringify(setup)}`);
    const renewal = await p().chargeOffSession({
      amount: 1900, currency: 'usd', paymentMethodId: setup.paymentMethod.id, processorCustomerId: c.id, idempotencyKey: key(),
    });
    expect(renewal).toMatchObject({ status: 'declined', code: 'card_declined' });
    await p().detachPaymentMethod(setup.paymentMethod.id);
    await expect(
      p().chargeOffSession({ amount: 100, currency: 'usd', paymentMethodId: setup.paymentMethod.id, processorCustomerId: c.id, idempotencyKey: key() }),
    ).rejects.toMatchObject({ code: 'resource_missing' });
  });
});

describe('stripe adapter on the wire', () => {
  it('authenticates with the secret key and sends idempotency keys', async () => {
    const before = fake.requests.length;
    const k = key();
    await processors.stripe!.createCustomer({ email: 'a@example.com', name: null, idempotencyKey: k });
    const sent = fake.requests.slice(before);
    expect(sent).toEqual([expect.objectContaining({ method: 'POST', path: '/v1/customers', idempotencyKey: k, body: { email: 'a@example.com' } })]);
    const wrong = createStripeProcessor({ secretKey: 'sk_test_wrong', apiBase: fake.url });
    await expect(wrong.createCustomer({ email: 'a@example.com', name: null, idempotencyKey: key() })).rejects.toThrow(/Invalid API Key/);
  });
});
