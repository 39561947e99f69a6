/**
 * Trials from the checkout on, on the time-skipping server: a checkout of a product with a 14-day
 * trial saves the card without charging and its fulfilment starts a `trialing` subscription; the
 * subscription workflow converts it at the trial's end with the first charge, ends it without any
 * charge when canceled during the trial, or starts dunning when the card is declined at conversion.
 * A second checkout of the product by the same customer gets no trial and is charged at once.
 */
import { randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { addMonths } from '../../api/src/modules/pricing/index.ts';
import { SUBSCRIPTION_UPDATES } from '../../workflows/src/ids.ts';
import { eventsOf, ordersOf, skipTo, startWorkflow, subscriptionRow, until, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';
import { startBilling } from './helpers.ts';
import { buyThroughLink, seedTrialProduct } from './trial-helpers.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
let lc: Lifecycle;
let running: Promise<void>;
let product: Awaited<ReturnType<typeof seedTrialProduct>>;
type Bought = Awaited<ReturnType<typeof buyThroughLink>>;
const emails = { converts: '', cancels: '', declines: '' };
const bought: Record<keyof typeof emails, Bought> = {} as never;
const handles: Partial<Record<keyof typeof emails, WorkflowHandle>> = {};
let trialEnd: Date;

beforeAll(async () => {
  lc = await startBilling();
  running = lc.worker.run();
  product = await seedTrialProduct(lc, { amount: 2900, trial: { interval: 'day', count: 14 } });
  for (const k of Object.keys(emails) as (keyof typeof emails)[]) emails[k] = `trial-${k}-${randomUUID().slice(0, 8)}@example.com`;
});
afterAll(async () => {
  for (const h of Object.values(handles)) await h?.terminate('test done').catch(() => {});
  lc?.worker.shutdown();
  await running;
  await lc?.close();
});

const checkoutCharges = (checkoutId: string) =>
  lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `checkout:${checkoutId}:%` } });
async function orderCharges(subscriptionId: string) {
  const orders = await ordersOf(lc, subscriptionId);
  const em = lc.deps.orm.em.fork();
  const out: SandboxCharge[] = [];
  for (const o of orders) out.push(...(await em.find(SandboxCharge, { idempotencyKey: { $like: `order:${o.id}:%` } })));
  return out;
}

describe('a checkout of a trial product', () => {
  it('saves the card without charging and starts a trialing subscription ending after the trial', async () => {
    bought.converts = await buyThroughLink(lc, product.linkSecret, emails.converts);
    bought.cancels = await buyThroughLink(lc, product.linkSecret, emails.cancels);
    bought.declines = await buyThroughLink(lc, product.linkSecret, emails.declines, 'tok_chargeCustomerFail');
    for (const b of Object.values(bought)) {
      expect(b.before).toEqual({ isPaymentRequired: false, isPaymentSetupRequired: true, totalAmount: 2900, activeTrialInterval: 'day', activeTrialIntervalCount: 14 });
      expect(await checkoutCharges(b.checkoutId)).toEqual([]);
      const sub = await subscriptionRow(lc, b.subscriptionId!);
      expect(sub.status).toBe('trialing');
      expect(sub.trialEnd!.getTime() - sub.trialStart!.getTime()).toBe(14 * DAY);
      expect(sub.currentPeriodEnd!.toISOString()).toBe(sub.trialEnd!.toISOString());
      expect(sub.paymentMethod).not.toBeNull();
      expect(await lc.deps.orm.em.fork().count(PaymentMethod, { customer: b.customerId })).toBe(1);
      const orders = await ordersOf(lc, b.subscriptionId!);
      expect(orders.map((o) => [o.billingReason, o.status, o.totalAmount])).toEqual([['subscription_create', 'paid', 0]]);
    }
    const types = (await eventsOf(lc, product.orgId)).map((e) => e.type);
    expect(types.filter((t) => t === 'subscription.created')).toHaveLength(3);
    expect(types.filter((t) => t === 'subscription.active')).toHaveLength(0);

    trialEnd = (await subscriptionRow(lc, bought.converts.subscriptionId!)).trialEnd!;
    for (const k of Object.keys(bought) as (keyof typeof emails)[]) handles[k] = await startWorkflow(lc, bought[k].subscriptionId!);
    await handles.cancels!.executeUpdate(SUBSCRIPTION_UPDATES.cancel, { args: [{}] });
    const canceled = await subscriptionRow(lc, bought.cancels.subscriptionId!);
    expect([canceled.status, canceled.cancelAtPeriodEnd]).toEqual(['trialing', true]);
  });

  it('converts at the end of the trial with the first charge, and not before', async () => {
    const sid = bought.converts.subscriptionId!;
    await skipTo(lc, new Date(trialEnd.getTime() - 2 * HOUR));
    expect((await subscriptionRow(lc, sid)).status).toBe('trialing');
    expect(await orderCharges(sid)).toEqual([]);

    await skipTo(lc, trialEnd);
    const orders = await until(async () => {
      const o = await ordersOf(lc, sid);
      return o.length === 2 && o[1]!.status === 'paid' ? o : null;
    });
    expect([orders[1]!.billingReason, orders[1]!.totalAmount]).toEqual(['subscription_cycle', 2900]);
    expect((await orderCharges(sid)).map((c) => [c.status, c.amount])).toEqual([['succeeded', 2900]]);
    const sub = await until(async () => {
      const row = await subscriptionRow(lc, sid);
      return row.status === 'active' ? row : null;
    });
    // The first paid period starts the day the trial ends; the next renewal keeps that day.
    expect(sub.currentPeriodStart.toISOString()).toBe(trialEnd.toISOString());
    expect(sub.currentPeriodEnd!.toISOString()).toBe(addMonths(trialEnd, 1).toISOString());
    const events = await eventsOf(lc, product.orgId);
    const active = events.filter((e) => e.type === 'subscription.active');
    expect(active.map((e) => e.data.id)).toEqual([sid]);
  });

  it('canceled during the trial, ends at its end without ever charging', async () => {
    const sid = bought.cancels.subscriptionId!;
    expect(await handles.cancels!.result()).toEqual({ outcome: 'ended' });
    const sub = await subscriptionRow(lc, sid);
    expect([sub.status, sub.endedAt?.toISOString()]).toEqual(['canceled', sub.trialEnd!.toISOString()]);
    expect((await ordersOf(lc, sid)).map((o) => [o.billingReason, o.totalAmount])).toEqual([['subscription_create', 0]]);
    expect(await orderCharges(sid)).toEqual([]);
    expect(await checkoutCharges(bought.cancels.checkoutId)).toEqual([]);
  });

  it('declined at conversion, goes past due and dunning retries as for any renewal', async () => {
    const sid = bought.declines.subscriptionId!;
    const [, order] = await until(async () => {
      const o = await ordersOf(lc, sid);
      const sub = await subscriptionRow(lc, sid);
      return o.length === 2 && sub.status === 'past_due' && lc.mails.some((m) => m.recipient === emails.declines) ? o : null;
    });
    expect([order!.status, order!.billingReason, order!.totalAmount]).toEqual(['pending', 'subscription_cycle', 2900]);
    expect(lc.mails.filter((m) => m.recipient === emails.declines).map((m) => m.subject)).toEqual([expect.stringContaining('Payment failed')]);
    // The first retry two days later charges the card again.
    await skipTo(lc, new Date(trialEnd.getTime() + 2 * DAY));
    const charges = await until(async () => {
      const c = await orderCharges(sid);
      return c.length === 2 ? c : null;
    });
    expect(charges.map((c) => [c.status, c.amount])).toEqual([
      ['failed', 2900],
      ['failed', 2900],
    ]);
    expect((await subscriptionRow(lc, sid)).status).toBe('past_due');
  });

  it('gives no second trial: the same customer checking out the product again pays at once', async () => {
    const again = await buyThroughLink(lc, product.linkSecret, emails.cancels);
    expect(again.before).toEqual({ isPaymentRequired: true, isPaymentSetupRequired: true, totalAmount: 2900, activeTrialInterval: null, activeTrialIntervalCount: null });
    expect(again.customerId).toBe(bought.cancels.customerId);
    expect((await checkoutCharges(again.checkoutId)).map((c) => [c.status, c.amount])).toEqual([['succeeded', 2900]]);
    const sub = await subscriptionRow(lc, again.subscriptionId!);
    expect([sub.status, sub.trialStart, sub.trialEnd]).toEqual(['active', null, null]);
    const orders = await ordersOf(lc, again.subscriptionId!);
    expect(orders.map((o) => [o.billingReason, o.status, o.totalAmount])).toEqual([['subscription_create', 'paid', 2900]]);
  });
});
