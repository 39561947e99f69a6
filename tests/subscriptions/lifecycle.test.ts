/**
 * The `subscription:<id>` workflow at production lengths on Temporal's time-skipping server, with its
 * real activities against a test database and the sandbox processor: a year of monthly renewals with
 * a repeating discount and month-end anchors, mid-cycle upgrades with each proration behaviour,
 * dunning that recovers or runs out, cancel / uncancel, cancel at period end and revoke. Every order
 * is checked to the cent, and the webhook events (outbox rows) each step wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { setSandboxCardOutcome } from '../../api/src/modules/payments/sandbox.ts';
import { addMonths, cycleStart } from '../../api/src/modules/pricing/index.ts';
import { SUBSCRIPTION_UPDATES } from '../../workflows/src/ids.ts';
import { waitForMail } from '../harness.ts';
import {
  countTypes,
  envNow,
  eventsOf,
  nextDate,
  ordersOf,
  seedProduct,
  seedSubscription,
  skipTo,
  startLifecycle,
  startWorkflow,
  subscriptionRow,
  until,
  amounts,
  type Lifecycle,
} from './lifecycle-helpers.ts';

const DAY = 86_400_000;
let lc: Lifecycle;
let running: Promise<void>;

beforeAll(async () => {
  lc = await startLifecycle();
  running = lc.worker.run();
});
afterAll(async () => {
  lc?.worker.shutdown();
  await running;
  await lc?.close();
});

async function chargesOf(orderId: string) {
  return lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `order:${orderId}:%` } }, { orderBy: { createdAt: 'asc' } });
}

/** Moves Temporal time to `at` (an exact instant) when it is ahead. */
async function sleepTo(at: Date) {
  const ms = at.getTime() - (await lc.env.currentTimeMs());
  if (ms > 0) await lc.env.sleep(ms);
}

describe('renewals', () => {
  it('renews monthly for a year from a Jan 31 start, with a 3-month 25 % discount, each order charged to the cent', async () => {
    const start = nextDate(await envNow(lc), 0, 31);
    await sleepTo(start);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1999, discount: { basisPoints: 2500, months: 3 } });
    const handle = await startWorkflow(lc, s.subscriptionId);

    for (let k = 1; k <= 12; k++) {
      await skipTo(lc, cycleStart(start, 'month', k));
      await until(async () => {
        const orders = await ordersOf(lc, s.subscriptionId);
        return orders.length === k && orders[k - 1]!.status === 'paid';
      });
    }
    const orders = await ordersOf(lc, s.subscriptionId);
    expect(orders.map((o) => o.billingReason)).toEqual(Array(12).fill('subscription_cycle'));
    // Periods starting Feb 28 and Mar 31 are still within the discount's 3 months (Jan 31 + 2).
    const discounted = { subtotal: 1999, discount: 500, net: 1499, tax: 0, total: 1499 };
    const full = { subtotal: 1999, discount: 0, net: 1999, tax: 0, total: 1999 };
    expect(orders.map(amounts)).toEqual([discounted, discounted, ...Array(10).fill(full)]);
    expect(orders.every((o) => o.status === 'paid' && o.processorChargeId)).toBe(true);
    for (const o of orders) {
      const charges = await chargesOf(o.id);
      expect(charges.map((c) => [c.status, c.amount])).toEqual([['succeeded', o.totalAmount]]);
    }

    // Month-end anchors: Feb 28 (or 29), then back to the 31st (or the month's last day).
    const sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub.status).toBe('active');
    expect(sub.currentPeriodStart.toISOString()).toBe(addMonths(start, 12, 31).toISOString());
    expect(sub.currentPeriodEnd!.toISOString()).toBe(addMonths(start, 13, 31).toISOString());
    expect(sub.currentPeriodStart.getUTCDate()).toBe(31);
    expect(sub.discount).toBeNull();
    expect(sub.amount).toBe(1999);

    const events = await eventsOf(lc, s.orgId);
    expect(countTypes(events)).toEqual({ 'subscription.updated': 12, 'order.created': 12, 'order.updated': 12, 'order.paid': 12 });
    const renewals = events.filter((e) => e.type === 'subscription.updated').map((e) => e.data.current_period_start.slice(0, 10));
    expect(renewals.slice(0, 3)).toEqual([1, 2, 3].map((k) => cycleStart(start, 'month', k).toISOString().slice(0, 10)));
    expect(events.filter((e) => e.type === 'order.paid').map((e) => e.data.net_amount)).toEqual([1499, 1499, ...Array(10).fill(1999)]);

    const grants = lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId);
    expect(grants.map((g) => [g.action, g.scope.orderId])).toEqual(orders.map((o) => ['grant', o.id]));
    await handle.terminate('test done');
  });
});

describe('changing product mid-cycle', () => {
  async function upgradeHalfway(behavior: 'invoice' | 'prorate') {
    // April has 30 days: halfway is exactly 15 days in.
    const start = nextDate(await envNow(lc), 3, 1);
    await sleepTo(start);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1000 });
    const pro = await seedProduct(lc, s.orgId, 3000, 'Pro');
    const handle = await startWorkflow(lc, s.subscriptionId);
    await sleepTo(new Date(start.getTime() + 15 * DAY));
    const answer = await handle.executeUpdate(SUBSCRIPTION_UPDATES.changeProduct, {
      args: [{ productId: pro.productId, prorationBehavior: behavior }],
    });
    return { s, pro, handle, start, answer: answer as { orderId: string | null; paid: boolean | null } };
  }

  it('invoice: bills the prorated difference now, then the new price', async () => {
    const { s, pro, handle, start, answer } = await upgradeHalfway('invoice');
    expect(answer.paid).toBe(true);
    let orders = await ordersOf(lc, s.subscriptionId);
    expect(orders).toHaveLength(1);
    // Credit −500 for the unused half of 1000, debit +1500 for half of 3000.
    expect(orders[0]).toMatchObject({ billingReason: 'subscription_update', status: 'paid', id: answer.orderId });
    expect(amounts(orders[0]!)).toEqual({ subtotal: 1000, discount: 0, net: 1000, tax: 0, total: 1000 });
    const sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub.product.id).toBe(pro.productId);
    expect(sub.amount).toBe(3000);

    await skipTo(lc, addMonths(start, 1));
    orders = await until(async () => {
      const all = await ordersOf(lc, s.subscriptionId);
      return all.length === 2 && all[1]!.status === 'paid' ? all : null;
    });
    expect(orders[1]!.billingReason).toBe('subscription_cycle');
    expect(amounts(orders[1]!)).toEqual({ subtotal: 3000, discount: 0, net: 3000, tax: 0, total: 3000 });

    const events = countTypes(await eventsOf(lc, s.orgId));
    expect(events).toMatchObject({ 'order.created': 2, 'order.paid': 2, 'customer.state_changed': 1 });
    expect(events['subscription.updated']).toBe(2);
    const benefitActions = lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => [c.action, c.scope.productId]);
    expect(benefitActions.slice(0, 2)).toEqual([
      ['revoke', s.productId],
      ['grant', pro.productId],
    ]);
    await handle.terminate('test done');
  });

  it('prorate: carries the difference to the next cycle’s order', async () => {
    const { s, handle, start, answer } = await upgradeHalfway('prorate');
    expect(answer.orderId).toBeNull();
    expect(await ordersOf(lc, s.subscriptionId)).toHaveLength(0);
    expect((await subscriptionRow(lc, s.subscriptionId)).pendingProrationAmount).toBe(1000);

    await skipTo(lc, addMonths(start, 1));
    const orders = await until(async () => {
      const all = await ordersOf(lc, s.subscriptionId);
      return all.length === 1 && all[0]!.status === 'paid' ? all : null;
    });
    expect(orders[0]!.billingReason).toBe('subscription_cycle');
    expect(amounts(orders[0]!)).toEqual({ subtotal: 4000, discount: 0, net: 4000, tax: 0, total: 4000 });
    expect((await subscriptionRow(lc, s.subscriptionId)).pendingProrationAmount).toBe(0);
    await handle.terminate('test done');
  });
});

describe('failed renewals', () => {
  it('goes past due, mails the customer, and recovers on the second retry with a new card', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 2500, token: 'tok_chargeCustomerFail' });
    const handle = await startWorkflow(lc, s.subscriptionId);
    const end = addMonths(start, 1);

    await skipTo(lc, end);
    const [order] = await until(async () => {
      const all = await ordersOf(lc, s.subscriptionId);
      const sub = await subscriptionRow(lc, s.subscriptionId);
      return all.length === 1 && sub.status === 'past_due' && lc.mails.some((m) => m.recipient === s.email) ? all : null;
    });
    expect(order).toMatchObject({ status: 'pending', billingReason: 'subscription_cycle', totalAmount: 2500 });
    const mine = () => lc.mails.filter((m) => m.recipient === s.email);
    expect(mine()[0]!.subject).toContain('Payment failed');
    expect(mine()[0]!.text).toContain('/portal/');
    expect(mine()[0]!.text).toContain('USD 25.00');
    // The dunning mail reached the customer's mailbox (MailDev), not only the recorder.
    const delivered = (await waitForMail(s.email, 20_000, 'Payment failed')).filter((m) => m.subject.includes('Payment failed'));
    expect(delivered).toHaveLength(1);
    expect(delivered[0]!.text).toContain('/portal/');
    expect(delivered[0]!.text).toContain('USD 25.00');

    // First retry two days later: still declined.
    await skipTo(lc, new Date(end.getTime() + 2 * DAY));
    await until(async () => (await chargesOf(order!.id)).length === 2 && mine().length === 2);
    expect((await subscriptionRow(lc, s.subscriptionId)).status).toBe('past_due');

    // The customer saves a working card; the second retry (5 days later) pays.
    const processor = lc.deps.processor;
    const em = lc.deps.orm.em.fork();
    const customer = await em.findOneOrFail(PaymentMethod, { customer: s.customerId }, { populate: ['customer'] });
    const saved = await processor.setupPaymentMethod({
      confirmationTokenId: 'tok_visa',
      processorCustomerId: customer.customer.processorCustomerId!,
      idempotencyKey: `new-card:${s.customerId}`,
    });
    if (saved.status !== 'succeeded') throw new Error('card not saved');
    customer.isDefault = false;
    await em.flush();
    em.create(PaymentMethod, {
      customer: s.customerId,
      processor: processor.name,
      processorId: saved.paymentMethod.id,
      brand: 'visa',
      last4: '4242',
      expMonth: saved.paymentMethod.expMonth,
      expYear: saved.paymentMethod.expYear,
      wallet: null,
      isDefault: true,
      deletedAt: null,
    });
    await em.flush();

    await skipTo(lc, new Date(end.getTime() + 7 * DAY));
    await until(async () => (await subscriptionRow(lc, s.subscriptionId)).status === 'active');
    const [paid] = await ordersOf(lc, s.subscriptionId);
    expect(paid).toMatchObject({ status: 'paid', totalAmount: 2500 });
    expect((await chargesOf(order!.id)).map((c) => [c.status, c.amount])).toEqual([
      ['failed', 2500],
      ['failed', 2500],
      ['succeeded', 2500],
    ]);
    expect(mine()).toHaveLength(2);

    const events = await eventsOf(lc, s.orgId);
    expect(countTypes(events)).toEqual({
      'subscription.updated': 3,
      'subscription.active': 1,
      'customer.state_changed': 2,
      'order.created': 1,
      'order.updated': 1,
      'order.paid': 1,
    });
    const statuses = events.filter((e) => e.type === 'subscription.updated').map((e) => e.data.status);
    expect(statuses).toEqual(['active', 'past_due', 'active']);
    expect(lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => c.action)).toEqual(['grant']);
    await handle.terminate('test done');
  });

  it('becomes unpaid after four declined retries and loses its benefits after the grace period', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 900, settings: { benefit_revocation_grace_period: 3 } });
    // The card that paid at checkout starts declining (sandbox control, like Stripe's 0341 card).
    const card = await lc.deps.orm.em.fork().findOneOrFail(PaymentMethod, { customer: s.customerId });
    expect(await setSandboxCardOutcome(lc.deps.orm.em.fork(), card.processorId, 'charge_fails')).toBe(true);
    const handle = await startWorkflow(lc, s.subscriptionId);
    const end = addMonths(start, 1);
    // Retries after 2, 5, 7 and 7 days: the last one 21 days after the period end.
    await skipTo(lc, new Date(end.getTime() + 21 * DAY));
    await until(async () => (await subscriptionRow(lc, s.subscriptionId)).status === 'unpaid');
    const [order] = await ordersOf(lc, s.subscriptionId);
    expect(order).toMatchObject({ status: 'pending', totalAmount: 900 });
    expect((await chargesOf(order!.id)).map((c) => c.status)).toEqual(Array(5).fill('failed'));
    const mails = lc.mails.filter((m) => m.recipient === s.email);
    expect(mails).toHaveLength(5);
    expect(mails.at(-1)!.subject).toContain('unpaid');
    const sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub.endedAt).not.toBeNull();
    const revokes = () => lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId && c.action === 'revoke');
    expect(revokes()).toHaveLength(0);

    await skipTo(lc, new Date(end.getTime() + 24 * DAY));
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    expect(revokes()).toHaveLength(1);
    const events = await eventsOf(lc, s.orgId);
    expect(countTypes(events)).toEqual({
      'subscription.updated': 3,
      'subscription.revoked': 1,
      'customer.state_changed': 2,
      'order.created': 1,
    });
    expect(events.filter((e) => e.type === 'subscription.updated').map((e) => e.data.status)).toEqual(['active', 'past_due', 'unpaid']);
  });
});

describe('seller and customer actions', () => {
  it('cancels, refuses a second cancel, uncancels, and then renews as usual', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1200 });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await lc.env.sleep(3 * DAY);
    await handle.executeUpdate(SUBSCRIPTION_UPDATES.cancel, { args: [{ reason: 'too_expensive', comment: 'Pricey' }] });
    let sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub).toMatchObject({ cancelAtPeriodEnd: true, status: 'active', customerCancellationReason: 'too_expensive' });
    expect(sub.endsAt!.toISOString()).toBe(sub.currentPeriodEnd!.toISOString());

    const again = await handle.executeUpdate(SUBSCRIPTION_UPDATES.cancel, { args: [{}] }).catch((e: unknown) => e);
    expect(again).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((again as WorkflowUpdateFailedError).cause).toMatchObject({ type: 'AlreadyCanceledSubscription' });
    // Refused by the update's validator: the history holds one cancel activity, the first one's.
    const history = await handle.fetchHistory();
    const cancels = (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'cancelSubscription');
    expect(cancels).toHaveLength(1);

    await handle.executeUpdate(SUBSCRIPTION_UPDATES.uncancel, { args: [] as [] });
    sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub).toMatchObject({ cancelAtPeriodEnd: false, canceledAt: null, endsAt: null, customerCancellationReason: null });

    await skipTo(lc, addMonths(start, 1));
    const orders = await until(async () => {
      const all = await ordersOf(lc, s.subscriptionId);
      return all.length === 1 && all[0]!.status === 'paid' ? all : null;
    });
    expect(amounts(orders[0]!)).toEqual({ subtotal: 1200, discount: 0, net: 1200, tax: 0, total: 1200 });
    expect(countTypes(await eventsOf(lc, s.orgId))).toEqual({
      'subscription.updated': 3,
      'subscription.canceled': 1,
      'subscription.uncanceled': 1,
      'customer.state_changed': 2,
      'order.created': 1,
      'order.updated': 1,
      'order.paid': 1,
    });
    await handle.terminate('test done');
  });

  it('ends a subscription set to cancel at its period end, without charging, and revokes its benefits', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1200 });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await handle.executeUpdate(SUBSCRIPTION_UPDATES.cancel, { args: [{ reason: 'unused' }] });
    await skipTo(lc, addMonths(start, 1));
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    const sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub.status).toBe('canceled');
    expect(sub.endedAt!.toISOString()).toBe(addMonths(start, 1).toISOString());
    expect(await ordersOf(lc, s.subscriptionId)).toHaveLength(0);
    expect(lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => c.action)).toEqual(['revoke']);
    expect(countTypes(await eventsOf(lc, s.orgId))).toEqual({
      'subscription.updated': 2,
      'subscription.canceled': 1,
      'subscription.revoked': 1,
      'customer.state_changed': 2,
    });
  });

  it('revokes at once: canceled, ended now, benefits revoked, workflow finished', async () => {
    const start = await envNow(lc);
    const s = await seedSubscription(lc, { startedAt: start, amount: 1200 });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await lc.env.sleep(10 * DAY);
    const answer = await handle.executeUpdate(SUBSCRIPTION_UPDATES.revoke, { args: [{ reason: 'other', comment: 'Fraud' }] });
    expect(answer).toMatchObject({ subscriptionId: s.subscriptionId, status: 'canceled' });
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    const sub = await subscriptionRow(lc, s.subscriptionId);
    expect(sub).toMatchObject({ status: 'canceled', customerCancellationComment: 'Fraud' });
    expect(sub.endedAt!.getTime()).toBeGreaterThanOrEqual(start.getTime() + 10 * DAY);
    expect(sub.endedAt!.getTime()).toBeLessThan(sub.currentPeriodEnd!.getTime());
    expect(lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => c.action)).toEqual(['revoke']);
    expect(countTypes(await eventsOf(lc, s.orgId))).toEqual({
      'subscription.updated': 1,
      'subscription.canceled': 1,
      'subscription.revoked': 1,
      'customer.state_changed': 1,
    });
  });
});
