/**
 * The subscription side of trials (issue #19, second part) on the time-skipping server: a `trialing`
 * subscription converts at the trial's end with its first charge (active, subscription.active), or,
 * canceled during the trial, ends then without any charge. (Products and checkouts do not start
 * trials yet: the subscriptions are seeded trialing.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cycleStart } from '../../api/src/modules/pricing/index.ts';
import { SandboxCharge } from '../../api/src/modules/payments/sandbox-entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { envNow, eventsOf, nextDate, ordersOf, skipTo, startWorkflow, until, type Lifecycle } from '../subscriptions/lifecycle-helpers.ts';
import { seedMetered, startBilling } from './helpers.ts';

const HOUR = 3_600_000;
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

describe('trials', () => {
  it('converts at the end of the trial with the first charge', async () => {
    const start = nextDate(await envNow(lc), 6, 1);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '1', capAmount: null, status: 'trialing' });
    const handle = await startWorkflow(lc, s.subscriptionId);
    const trialEnd = cycleStart(start, 'month', 1);
    await skipTo(lc, trialEnd);
    const orders = await until(async () => {
      const o = await ordersOf(lc, s.subscriptionId);
      return o.length === 1 && o[0]!.status === 'paid' ? o : null;
    });
    expect(orders[0]!.totalAmount).toBe(1500);
    const charges = await lc.deps.orm.em.fork().find(SandboxCharge, { idempotencyKey: { $like: `order:${orders[0]!.id}:%` } });
    expect(charges.map((c) => [c.status, c.amount])).toEqual([['succeeded', 1500]]);
    const sub = await until(async () => {
      const row = await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId });
      return row.status === 'active' ? row : null;
    });
    expect(sub.currentPeriodStart.toISOString()).toBe(trialEnd.toISOString());
    const types = (await eventsOf(lc, s.orgId)).map((e) => e.type);
    expect(types.filter((t) => t === 'subscription.active')).toHaveLength(1);
    await handle.terminate('test done');
  });

  it('ends at the end of the trial without a charge when canceled during it', async () => {
    const start = nextDate(await envNow(lc), 7, 2);
    await skipTo(lc, new Date(start.getTime() - 2 * HOUR));
    const s = await seedMetered(lc, { startedAt: start, fixedAmount: 1500, unitAmount: '1', capAmount: null, status: 'trialing' });
    const em = lc.deps.orm.em.fork();
    const row = await em.findOneOrFail(Subscription, { id: s.subscriptionId });
    row.cancelAtPeriodEnd = true;
    row.canceledAt = start;
    row.endsAt = row.currentPeriodEnd;
    await em.flush();
    const handle = await startWorkflow(lc, s.subscriptionId);
    await skipTo(lc, cycleStart(start, 'month', 1));
    expect(await handle.result()).toEqual({ outcome: 'ended' });
    const ended = await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: s.subscriptionId });
    expect(ended.status).toBe('canceled');
    expect(await ordersOf(lc, s.subscriptionId)).toEqual([]);
  });
});
