/**
 * Making a saved card the default from the portal (`PATCH /v1/customer-portal/customers/me/payment-methods/{id}`
 * with `{"default": true}`): the list shows it as the only default, and the subscription's next renewal
 * charges it at the processor (the sandbox records which card each charge used).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { renewAndChargeSubscription } from '../../api/src/modules/subscriptions/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { buyerEmail, call, orderSeller, product, purchase, type Purchase, type Seller } from '../orders/helpers.ts';

let srv: TestServer;
let seller: Seller;
let subscriber: Purchase;
let other: Purchase;

const methods = (p: Purchase, method: string, path = '', body?: unknown) =>
  call(srv.url, p.customerSessionToken, method, `/v1/customer-portal/customers/me/payment-methods${path}`, body);

beforeAll(async () => {
  srv = await startTestServer();
  seller = await orderSeller(srv);
  const club = await product(srv, seller, 'Monthly club', 1500, 'month');
  subscriber = await purchase(srv, seller, club.id, buyerEmail('dora'));
  other = await purchase(srv, seller, club.id, buyerEmail('otto'));
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

describe('default payment method', () => {
  it('makes a card the default; the renewal charges it', async () => {
    const first = await methods(subscriber, 'GET');
    expect(first.body.items.map((m: any) => [m.card.last4, m.default])).toEqual([['4242', true]]);
    const master = await methods(subscriber, 'POST', '', { confirmation_token_id: 'tok_mastercard', set_default: false, return_url: 'https://shop.example.com/' });
    expect(master.status).toBe(201);
    expect(master.body.default).toBe(false);

    const made = await methods(subscriber, 'PATCH', `/${master.body.id}`, { default: true });
    expect(made.status).toBe(200);
    expect(made.body).toMatchObject({ id: master.body.id, default: true, card: { brand: 'mastercard' } });
    const listed = await methods(subscriber, 'GET');
    expect(listed.body.items.map((m: any) => [m.id, m.default])).toEqual([
      [master.body.id, true],
      [first.body.items[0].id, false],
    ]);
    // Again: still the one default.
    expect((await methods(subscriber, 'PATCH', `/${master.body.id}`, { default: true })).body.default).toBe(true);

    // The next renewal charges the default card at the processor.
    const em = srv.deps.orm.em.fork();
    const sub = await em.findOneOrFail(Subscription, { customer: subscriber.customerId });
    const renewed = await renewAndChargeSubscription(em, srv.deps.processor, sub.id, sub.currentPeriodEnd!.toISOString());
    expect(renewed).toMatchObject({ outcome: 'charge', paid: true });
    const fresh = em.fork();
    const [masterPm, visaPm] = await Promise.all([
      fresh.findOneOrFail(PaymentMethod, { id: master.body.id }),
      fresh.findOneOrFail(PaymentMethod, { id: first.body.items[0].id }),
    ]);
    const chargesOf = async (processorId: string) =>
      (await em.fork().find(SandboxCharge, { paymentMethodId: processorId }, { orderBy: { createdAt: 'asc' } })).map((c) => [c.amount, c.status]);
    // The checkout charged the first card; the renewal, the new default (never charged before).
    expect(await chargesOf(masterPm.processorId)).toEqual([[1500, 'succeeded']]);
    expect(await chargesOf(visaPm.processorId)).toEqual([[1500, 'succeeded']]);
  });

  it("is a 404 for another customer's card and a 422 for anything but true", async () => {
    const theirs = await methods(other, 'GET');
    expect(theirs.body.items).toHaveLength(1);
    const foreign = await methods(subscriber, 'PATCH', `/${theirs.body.items[0].id}`, { default: true });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error).toBe('ResourceNotFound');
    const bad = await methods(other, 'PATCH', `/${theirs.body.items[0].id}`, { default: false });
    expect(bad.status).toBe(422);
    expect(bad.body.detail.map((d: any) => d.loc.join('.'))).toEqual(['body.default']);
  });
});
