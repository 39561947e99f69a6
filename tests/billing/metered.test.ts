/**
 * Usage-based billing at renewal (issue #19), on Temporal's time-skipping server with the real
 * subscription activities: each cycle's order bills the meter's usage of the period that ended, to
 * the cent, credits first, capped, late events in the next cycle; a fixed + metered product with a
 * repeating discount and tax. Orders' lines sum to their subtotal, discount and tax.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeteredBilling } from '../../api/src/modules/usage/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { cycleStart } from '../../api/src/modules/pricing/index.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { PaymentMethod } from '../../api/src/modules/payment-methods/entities.ts';
import { setSandboxCardOutcome } from '../../api/src/modules/payments/sandbox.ts';
import { SUBSCRIPTION_UPDATES } from '../../workflows/src/ids.ts';
import { amounts, countTypes, envNow, eventsOf, nextDate, ordersOf, skipTo, startWorkflow, until, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';
import { credit, ingest, seedMetered, startBilling } from './helpers.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
let lc: Lifecycle;
let running: Promise<void>;

beforeAll(async () => {
  lc = await startBilling();
  running = lc.worker.run();
});
afterAll(async () => {
  lc?.worker.shutdown();
  await running;
  await lc?.close();
});

async function renewed(subscriptionId: string, k: number) {
  return until(async () => {
    const orders = await ordersOf(lc, subscriptionId);
    return orders.length === k && orders[k - 1]!.status === 'paid' ? orders : null;
  });
}

function expectLinesAddUp(o: { subtotalAmount: number; discountAmount: number; taxAmount: number; lines?: { amount: number; discountAmount: number; taxAmount: number }[] | null }) {
  const lines = o.lines ?? [];
  expect(lines.reduce((t, l) => t + l.amount, 0)).toBe(o.subtotalAmount);
  expect(lines.reduce((t, l) => t + l.discountAmount, 0)).toBe(o.discountAmount);
  expect(lines.reduce((t, l) => t + l.taxAmount, 0)).toBe(o.taxAmount);
}

describe('metered renewals', () => {
  it('bills three cycles of usage: credits first, the cap, a late event in the next cycle, never twice', async () => {
    const start = nextDate(await envNow(lc), 0, 10);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: null, unitAmount: '12.5', capAmount: 10_000 });
    const [p1, p2, p3] = [1, 2, 3].map((k) => cycleStart(start, 'month', k));
    // Before the subscription: never billed.
    await ingest(lc, s, new Date(start.getTime() - HOUR), [999]);
    await credit(lc, s, 100);
    const handle = await startWorkflow(lc, s.subscriptionId);

    // Cycle 1: 210 units, 100 credited → 110 × 12.5 = 1375. Other events and names do not count.
    await ingest(lc, s, new Date(start.getTime() + 5 * 24 * HOUR), [40, 100]);
    await ingest(lc, s, new Date(p1!.getTime() - 1000), [70]);
    await ingest(lc, s, new Date(start.getTime() + HOUR), [5000], 'page_view');
    await skipTo(lc, p1!);
    let orders = await renewed(s.subscriptionId, 1);
    expect(amounts(orders[0]!)).toEqual({ subtotal: 1375, discount: 0, net: 1375, tax: 0, total: 1375 });
    expect(orders[0]!.lines!.map((l) => [l.usage, l.creditsUsed, l.billableUnits, l.amount])).toEqual([['210', '100', '110', 1375]]);

    // A late event of cycle 1 (ingested after its renewal), and cycle 2's own: 8 + 300 = 308 → 3850.
    await ingest(lc, s, new Date(p1!.getTime() - 2 * HOUR), [8]);
    await ingest(lc, s, new Date(p1!.getTime() + 3 * 24 * HOUR), [300]);
    // An event exactly at the period end belongs to the next period.
    await ingest(lc, s, p2!, [4]);
    await skipTo(lc, p2!);
    orders = await renewed(s.subscriptionId, 2);
    expect(amounts(orders[1]!)).toEqual({ subtotal: 3850, discount: 0, net: 3850, tax: 0, total: 3850 });
    expect(orders[1]!.lines!.map((l) => [l.usage, l.creditsUsed, l.amount])).toEqual([['308', '0', 3850]]);

    // Cycle 3: 4 + 1000 units = 13050 uncapped → the cap, 10000.
    await ingest(lc, s, new Date(p2!.getTime() + HOUR), [1000]);
    await skipTo(lc, p3!);
    orders = await renewed(s.subscriptionId, 3);
    expect(amounts(orders[2]!)).toEqual({ subtotal: 10_000, discount: 0, net: 10_000, tax: 0, total: 10_000 });
    expect(orders[2]!.lines!.map((l) => [l.usage, l.amount])).toEqual([['1004', 10_000]]);
    for (const o of orders) expectLinesAddUp(o);

    // Each event billed once: per-period records carry the bounds; the charges match the orders.
    const em = lc.deps.orm.em.fork();
    const records = await em.find(MeteredBilling, { subscription: s.subscriptionId }, { orderBy: { periodEnd: 'asc' } });
    expect(records.map((r) => [r.periodEnd.toISOString(), r.usage, r.creditsUsed, r.amount, r.order?.id])).toEqual([
      [p1!.toISOString(), '210', '100', 1375, orders[0]!.id],
      [p2!.toISOString(), '308', '0', 3850, orders[1]!.id],
      [p3!.toISOString(), '1004', '0', 10_000, orders[2]!.id],
    ]);
    expect(records.every((r, i) => i === 0 || r.billedThrough > records[i - 1]!.billedThrough)).toBe(true);
    for (const o of orders) {
      const charges = await em.find(SandboxCharge, { idempotencyKey: { $like: `order:${o.id}:%` } });
      expect(charges.map((c) => [c.status, c.amount])).toEqual([['succeeded', o.totalAmount]]);
    }
    await handle.terminate('test done');
  });

  it('bills a fixed price and usage together with a repeating discount and tax', async () => {
    const start = nextDate(await envNow(lc), 2, 3);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, {
      startedAt: start,
      fixedAmount: 2000,
      unitAmount: '0.25',
      capAmount: null,
      discount: { basisPoints: 1000, months: 2 },
      tax: { country: 'FR', basisPoints: 2000 },
    });
    const [p1, p2] = [1, 2].map((k) => cycleStart(start, 'month', k));
    const handle = await startWorkflow(lc, s.subscriptionId);

    // 1234 × 0.25 = 308.5 → 309; 2000 + 309 = 2309; −10 % = 231 → 2078; +20 % tax = 415.6 → 416.
    await ingest(lc, s, new Date(start.getTime() + 24 * HOUR), [1000, 234]);
    await skipTo(lc, p1!);
    let orders = await renewed(s.subscriptionId, 1);
    expect(amounts(orders[0]!)).toEqual({ subtotal: 2309, discount: 231, net: 2078, tax: 416, total: 2494 });
    expect(orders[0]!.lines!.map((l) => [l.productPriceId, l.amount])).toEqual([
      [s.fixedPriceId, 2000],
      [s.meteredPriceId, 309],
    ]);

    // The discount's two months are over (the period starting at p2); 10 × 0.25 = 2.5 → 3.
    await ingest(lc, s, new Date(p1!.getTime() + HOUR), [10]);
    await skipTo(lc, p2!);
    orders = await renewed(s.subscriptionId, 2);
    expect(amounts(orders[1]!)).toEqual({ subtotal: 2003, discount: 0, net: 2003, tax: 401, total: 2404 });
    for (const o of orders) expectLinesAddUp(o);
    await handle.terminate('test done');
  });

  it('bills the last period’s usage when a subscription set to cancel ends, once', async () => {
    const start = nextDate(await envNow(lc), 4, 20);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '3', capAmount: null });
    const em = lc.deps.orm.em.fork();
    const sub = await em.findOneOrFail(Subscription, { id: s.subscriptionId });
    sub.cancelAtPeriodEnd = true;
    sub.canceledAt = start;
    sub.endsAt = sub.currentPeriodEnd;
    await em.flush();
    const handle = await startWorkflow(lc, s.subscriptionId);
    await ingest(lc, s, new Date(start.getTime() + HOUR), [7]);
    const p1 = cycleStart(start, 'month', 1);
    await skipTo(lc, p1);
    // No next period: only the usage, 7 × 3 = 21, charged once.
    const orders = await renewed(s.subscriptionId, 1);
    expect(amounts(orders[0]!)).toEqual({ subtotal: 21, discount: 0, net: 21, tax: 0, total: 21 });
    expect(orders[0]!.lines!.map((l) => [l.productPriceId, l.amount])).toEqual([[s.meteredPriceId, 21]]);
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    const ended = await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId });
    expect([ended.status, ended.endedAt?.toISOString()]).toEqual(['canceled', p1.toISOString()]);
    const charges = await lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `order:${orders[0]!.id}:%` } });
    expect(charges.map((c) => [c.status, c.amount])).toEqual([['succeeded', 21]]);
    expect(lc.benefitCalls.filter((c) => c.scope.subscriptionId === s.subscriptionId).map((c) => c.action)).toEqual(['revoke']);
  });

  it('bills the unfinished period’s usage when a subscription is revoked, once, and nothing after', async () => {
    const start = nextDate(await envNow(lc), 5, 10);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '2', capAmount: null, tax: { country: 'FR', basisPoints: 2000 } });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await ingest(lc, s, new Date(start.getTime() + HOUR), [4, 5]);
    await skipTo(lc, new Date(start.getTime() + 3 * HOUR));
    const answer = await handle.executeUpdate(SUBSCRIPTION_UPDATES.revoke, { args: [{ reason: 'other', comment: null }] });
    expect(answer).toMatchObject({ subscriptionId: s.subscriptionId, status: 'canceled' });
    expect(await handle.result()).toEqual({ outcome: 'ended' });

    // Usage only (the fixed price was paid in advance): 9 × 2 = 18, +20 % tax = 3.6 → 4; charged once.
    const orders = await until(async () => {
      const o = await ordersOf(lc, s.subscriptionId);
      return o.length === 1 && o[0]!.status === 'paid' ? o : null;
    });
    expect(amounts(orders[0]!)).toEqual({ subtotal: 18, discount: 0, net: 18, tax: 4, total: 22 });
    expect(orders[0]!.lines!.map((l) => [l.productPriceId, l.amount])).toEqual([[s.meteredPriceId, 18]]);
    expectLinesAddUp(orders[0]!);
    const charges = await lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `order:${orders[0]!.id}:%` } });
    expect(charges.map((c) => [c.status, c.amount])).toEqual([['succeeded', 22]]);
    const ended = await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId });
    const billing = await lc.deps.orm.em.fork().find(MeteredBilling, { subscription: s.subscriptionId });
    expect(billing.map((b) => [Number(b.usage), b.periodEnd.toISOString(), b.order?.id])).toEqual([[9, ended.endedAt!.toISOString(), orders[0]!.id]]);
    expect(countTypes(await eventsOf(lc, s.orgId))).toMatchObject({ 'subscription.revoked': 1, 'order.created': 1, 'order.paid': 1 });

    // An event of the revoked period that arrives afterwards has no cycle left to bill it.
    await ingest(lc, s, new Date(start.getTime() + 2 * HOUR), [100]);
    await skipTo(lc, cycleStart(start, 'month', 1));
    expect(await ordersOf(lc, s.subscriptionId)).toHaveLength(1);
  });

  it('dunns a declined final usage order after the subscription ended, and it is paid when the card works again', async () => {
    const start = nextDate(await envNow(lc), 8, 3);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '2', capAmount: null });
    const handle = await startWorkflow(lc, s.subscriptionId, [2 * DAY, 5 * DAY]);
    await ingest(lc, s, new Date(start.getTime() + HOUR), [6]);
    const card = await lc.deps.orm.em.fork().findOneOrFail(PaymentMethod, { customer: s.customerId });
    expect(await setSandboxCardOutcome(lc.deps.orm.em.fork(), card.processorId, 'charge_fails')).toBe(true);
    await skipTo(lc, new Date(start.getTime() + 3 * HOUR));
    const revokedAt = await envNow(lc);
    await handle.executeUpdate(SUBSCRIPTION_UPDATES.revoke, { args: [{ reason: null, comment: null }] });

    // 6 × 2 = 12, declined: the order stays pending, the subscription stays canceled, the customer is told.
    const { email } = await lc.deps.orm.em.fork().findOneOrFail(Customer, { id: s.customerId });
    const mine = () => lc.mails.filter((m) => m.recipient === email);
    const [order] = await until(async () => {
      const o = await ordersOf(lc, s.subscriptionId);
      return o.length === 1 && mine().length === 1 ? o : null;
    });
    expect(order).toMatchObject({ status: 'pending', totalAmount: 12 });
    expect(mine()[0]!.subject).toBe('Payment failed for the final usage of your Usage plan subscription');
    expect(mine()[0]!.text).toContain('USD 0.12');
    expect(mine()[0]!.text).toContain('which has ended');
    expect(mine()[0]!.text).toContain('/portal/');
    const charges = () => lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `order:${order!.id}:%` } }, { orderBy: { createdAt: 'asc' } });

    // First retry two days later: declined again, a second notice.
    await skipTo(lc, new Date(revokedAt.getTime() + 2 * DAY + HOUR));
    await until(async () => (await charges()).length === 2 && mine().length === 2);
    expect((await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId })).status).toBe('canceled');

    // The card works again: the second retry pays the order; the run ends.
    await setSandboxCardOutcome(lc.deps.orm.em.fork(), card.processorId, 'succeed');
    await skipTo(lc, new Date(revokedAt.getTime() + 7 * DAY + 2 * HOUR));
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    expect((await charges()).map((c) => [c.status, c.amount])).toEqual([
      ['failed', 12],
      ['failed', 12],
      ['succeeded', 12],
    ]);
    expect((await ordersOf(lc, s.subscriptionId))[0]).toMatchObject({ status: 'paid', totalAmount: 12 });
    expect((await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId })).status).toBe('canceled');
    expect(mine()).toHaveLength(2);
    expect(countTypes(await eventsOf(lc, s.orgId))).toMatchObject({ 'subscription.revoked': 1, 'order.created': 1, 'order.paid': 1 });
  });

  it('revokes a metered subscription without usage without an order', async () => {
    const start = nextDate(await envNow(lc), 7, 12);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '2', capAmount: null });
    const handle = await startWorkflow(lc, s.subscriptionId);
    await skipTo(lc, new Date(start.getTime() + HOUR));
    await handle.executeUpdate(SUBSCRIPTION_UPDATES.revoke, { args: [{ reason: null, comment: null }] });
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    expect(await ordersOf(lc, s.subscriptionId)).toHaveLength(0);
    const billing = await lc.deps.orm.em.fork().find(MeteredBilling, { subscription: s.subscriptionId });
    expect(billing.map((b) => [Number(b.usage), b.order])).toEqual([[0, null]]);
  });

  it('bills events sent with the customer’s external id as theirs, and not another customer’s', async () => {
    const start = nextDate(await envNow(lc), 6, 15);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: null, unitAmount: '2', capAmount: null });
    const other = await seedMetered(lc, { orgId: s.orgId, startedAt: start, fixedAmount: null, unitAmount: '2', capAmount: null });
    const em = lc.deps.orm.em.fork();
    await em.nativeUpdate(Customer, { id: s.customerId }, { externalId: `ext-${s.customerId}` });
    await em.nativeUpdate(Customer, { id: other.customerId }, { externalId: `ext-${other.customerId}` });
    const handle = await startWorkflow(lc, s.subscriptionId);
    const at = new Date(start.getTime() + HOUR);
    await ingest(lc, s, at, [3]);
    await insertEvents(
      lc.deps.orm.em.fork(),
      [
        { organizationId: s.orgId, name: 'api_call', timestamp: at, customerId: null, externalCustomerId: `ext-${s.customerId}`, metadata: { units: 4 } },
        { organizationId: s.orgId, name: 'api_call', timestamp: at, customerId: null, externalCustomerId: `ext-${other.customerId}`, metadata: { units: 50 } },
      ],
      'user',
    );
    await skipTo(lc, cycleStart(start, 'month', 1));
    // (3 + 4) × 2 = 14: the other customer's 50 units are not theirs.
    const orders = await renewed(s.subscriptionId, 1);
    expect(amounts(orders[0]!)).toEqual({ subtotal: 14, discount: 0, net: 14, tax: 0, total: 14 });
    const billed = await lc.deps.orm.em.fork().find(MeteredBilling, { subscription: s.subscriptionId });
    expect(billed.map((b) => [b.usage, b.amount])).toEqual([['7', 14]]);
    await handle.terminate('test done');
  });
});
