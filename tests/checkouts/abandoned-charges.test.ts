/**
 * Charges whose confirmation died between the processor call and recording its outcome (the API
 * process killed there): the confirmation had written its charge attempt before the call, so the
 * checkout-expiry sweeper finds it still pending once CHECKOUT_CHARGE_SETTLE_SECONDS have passed,
 * asks the processor again with the same idempotency key and gives back what the checkout does not
 * hold. The buyer then pays again, even with the same token, and is charged anew.
 *
 * The dead confirmation is re-enacted with the same calls it makes (confirm.ts `charge`): the attempt
 * row, then the processor's charge with that key, and nothing after.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Checkout, CheckoutChargeAttempt, type ChargeRequest } from '../../api/src/modules/checkouts/entities.ts';
import { SandboxCharge, SandboxRefund } from '../../api/src/modules/payments/sandbox-entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from './helpers.ts';
import { buyer, confirmRaw, confirmSeller, fulfilled, newCheckout, until, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let s: Seller;

beforeAll(async () => {
  srv = await startTestServer({ env: { CHECKOUT_CHARGE_SETTLE_SECONDS: '2' } });
  s = await confirmSeller(srv);
});
afterAll(async () => {
  await srv?.close();
});

const email = (tag: string) => `${tag}-${randomUUID().slice(0, 8)}@example.com`;

/** What a confirmation had done when it died: its attempt written and, if `charged`, the processor called. */
async function deadConfirmation(checkoutId: string, token: string, amount: number, charged: boolean) {
  const processor = srv.deps.processor;
  const buyerEmail = email('dead');
  const customer = await processor.createCustomer({ email: buyerEmail, name: null, idempotencyKey: `checkout:${checkoutId}:customer:${buyerEmail}` });
  const request: ChargeRequest = {
    amount,
    currency: 'usd',
    confirmationTokenId: token,
    processorCustomerId: customer.id,
    savePaymentMethod: false,
    idempotencyKey: `checkout:${checkoutId}:charge:${token}`,
    metadata: { checkout_id: checkoutId },
  };
  const em = srv.deps.orm.em.fork();
  em.create(CheckoutChargeAttempt, { checkout: checkoutId, idempotencyKey: request.idempotencyKey, request, status: 'pending', chargeId: null, settledAt: null });
  await em.flush();
  if (charged) await processor.confirmPayment(request);
  return request.idempotencyKey;
}

async function attemptStatus(key: string) {
  return (await srv.deps.orm.em.fork().findOneOrFail(CheckoutChargeAttempt, { idempotencyKey: key })).status;
}

async function chargesOf(checkoutId: string) {
  const em = srv.deps.orm.em.fork();
  const charges = await em.find(SandboxCharge, { idempotencyKey: { $like: `checkout:${checkoutId}:charge%` }, status: 'succeeded' });
  const refunds = charges.length ? await em.count(SandboxRefund, { chargeId: { $in: charges.map((c) => c.id) } }) : 0;
  return { charges, refunds };
}

describe('a charge whose confirmation died', () => {
  it('is refunded by the sweeper; paying again with the same token charges anew', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Lamp', prices: [{ amount_type: 'fixed', price_amount: 3100, price_currency: 'usd' }] });
    const c = await newCheckout(srv, s, product.id);
    const key = await deadConfirmation(c.id, 'tok_visa', 3100, true);
    expect((await chargesOf(c.id)).charges).toHaveLength(1);

    expect(await until(async () => ((await attemptStatus(key)) === 'refunded' ? 'refunded' : null), 30_000)).toBe('refunded');
    expect(await chargesOf(c.id)).toMatchObject({ refunds: 1 });
    const stored = await srv.deps.orm.em.fork().findOneOrFail(Checkout, { id: c.id });
    expect(stored).toMatchObject({ status: 'open', chargeAttempt: 1 });

    const paid = await confirmRaw(srv, c.client_secret, { ...buyer(email('again')), confirmation_token_id: 'tok_visa' });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(await fulfilled(srv, s, c.id)).toBe('succeeded');
    const after = await chargesOf(c.id);
    expect(after.charges).toHaveLength(2);
    expect(after.refunds).toBe(1);
    expect(await attemptStatus(`checkout:${c.id}:charge:tok_visa:1`)).toBe('confirmed');
  });

  it('is charged and given back when the processor never got the first call; a decline is just recorded', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Desk', prices: [{ amount_type: 'fixed', price_amount: 5000, price_currency: 'usd' }] });
    const never = await newCheckout(srv, s, product.id);
    const neverKey = await deadConfirmation(never.id, 'tok_visa', 5000, false);
    const declined = await newCheckout(srv, s, product.id);
    const declinedKey = await deadConfirmation(declined.id, 'tok_chargeDeclined', 5000, true);

    await until(async () => ((await attemptStatus(neverKey)) === 'refunded' && (await attemptStatus(declinedKey)) === 'declined') || null, 30_000);
    expect(await chargesOf(never.id)).toMatchObject({ refunds: 1 });
    expect((await chargesOf(never.id)).charges).toHaveLength(1);
    expect(await chargesOf(declined.id)).toMatchObject({ charges: [], refunds: 0 });
    expect((await srv.deps.orm.em.fork().findOneOrFail(Checkout, { id: declined.id })).chargeAttempt).toBe(0);
  });

  it('leaves the charges of completed purchases alone', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'Chair', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] });
    const c = await newCheckout(srv, s, product.id);
    const res = await confirmRaw(srv, c.client_secret, { ...buyer(email('fine')), confirmation_token_id: 'tok_visa' });
    expect(res.status).toBe(200);
    expect(await fulfilled(srv, s, c.id)).toBe('succeeded');
    expect(await attemptStatus(`checkout:${c.id}:charge:tok_visa`)).toBe('confirmed');
    // A dead confirmation written after that purchase: once the sweeper has refunded it, it has also
    // been through the older completed purchase (it settles attempts oldest first).
    const dead = await newCheckout(srv, s, product.id);
    const deadKey = await deadConfirmation(dead.id, 'tok_visa', 1500, true);
    await until(async () => ((await attemptStatus(deadKey)) === 'refunded' ? true : null), 30_000);
    expect(await chargesOf(dead.id)).toMatchObject({ refunds: 1 });
    // The completed purchase keeps its one charge, not refunded.
    expect(await chargesOf(c.id)).toMatchObject({ refunds: 0 });
    expect((await chargesOf(c.id)).charges).toHaveLength(1);
    expect(await attemptStatus(`checkout:${c.id}:charge:tok_visa`)).toBe('confirmed');
  });
});
