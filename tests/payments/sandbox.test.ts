/** Sandbox-only behaviour: persisted idempotency under concurrency, and test card numbers → tokens. */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSandboxProcessor } from '../../api/src/modules/payments/sandbox.ts';
import type { PaymentProcessor } from '../../api/src/modules/payments/processor.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { json, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
let processor: PaymentProcessor;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  processor = createSandboxProcessor(srv.deps.orm);
});
afterAll(async () => {
  await srv?.close();
});

const key = () => randomUUID();
const customer = () => processor.createCustomer({ email: 'buyer@example.com', name: 'Buyer', idempotencyKey: key() });

async function tokenFor(card_number: string, exp_year = new Date().getUTCFullYear() + 2) {
  const res = await fetch(`${srv.url}/v1/sandbox/confirmation-tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ card_number, exp_month: 12, exp_year, cvc: '123' }),
  });
  return { status: res.status, body: await json(res) };
}

describe('sandbox processor', () => {
  it('returns the first result when an idempotency key is repeated, even concurrently', async () => {
    const c = await customer();
    const k = key();
    const input = { amount: 700, currency: 'usd', confirmationTokenId: 'tok_mastercard', processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: k };
    const [a, b] = await Promise.all([processor.confirmPayment(input), processor.confirmPayment(input)]);
    const again = await processor.confirmPayment(input);
    expect(a.status).toBe('succeeded');
    expect(new Set([a.chargeId, b.chargeId, again.chargeId]).size).toBe(1);
    expect(await srv.deps.orm.em.fork().count(SandboxCharge, { idempotencyKey: k })).toBe(1);
  });

  it('turns test card numbers into single-use tokens with their outcomes', async () => {
    const c = await customer();
    const ok = await tokenFor('4242 4242 4242 4242');
    expect(ok.status).toBe(201);
    expect(ok.body.card).toMatchObject({ brand: 'visa', last4: '4242' });
    const paid = await processor.confirmPayment({
      amount: 100, currency: 'usd', confirmationTokenId: ok.body.id, processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key(),
    });
    expect(paid.status).toBe('succeeded');
    await expect(
      processor.confirmPayment({ amount: 100, currency: 'usd', confirmationTokenId: ok.body.id, processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key() }),
    ).rejects.toMatchObject({ code: 'token_already_used' });

    const declined = await tokenFor('4000000000000002');
    const d = await processor.confirmPayment({
      amount: 100, currency: 'usd', confirmationTokenId: declined.body.id, processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key(),
    });
    expect(d).toMatchObject({ status: 'declined', declineCode: 'generic_decline' });

    const poor = await tokenFor('4000000000009995');
    const p = await processor.confirmPayment({
      amount: 100, currency: 'usd', confirmationTokenId: poor.body.id, processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key(),
    });
    expect(p).toMatchObject({ status: 'declined', declineCode: 'insufficient_funds' });
  });

  it('refuses invalid and expired card numbers with 422', async () => {
    const bad = await tokenFor('4242 4242 4242 4241');
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0]).toMatchObject({ loc: ['body', 'card_number'], msg: 'Your card number is invalid.' });
    const old = await tokenFor('4242424242424242', 2020);
    expect(old.status).toBe(422);
    expect(old.body.detail[0].loc).toEqual(['body', 'exp_year']);
    const live = await tokenFor('4111111111111111');
    expect(live.status).toBe(201);
    const c = await customer();
    const r = await processor.confirmPayment({
      amount: 100, currency: 'usd', confirmationTokenId: live.body.id, processorCustomerId: c.id, savePaymentMethod: false, idempotencyKey: key(),
    });
    expect(r).toMatchObject({ status: 'declined', declineCode: 'test_mode_live_card' });
  });
});
