/**
 * Meter credits across billing cycles: with `rollover: false` the previous period's unused credits
 * expire when the next period's are credited; with `rollover: true` they carry over. Revoking takes
 * back what is still credited, never more than the customer's balance, so credits already used by
 * billed usage do not leave the customer owing credits (a later subscription starts from its own).
 * Consumption is what a renewal's usage billing records (`metered_billings.credits_used`).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestBenefitAction } from '../../api/src/modules/benefits/lifecycle.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { MeteredBilling } from '../../api/src/modules/usage/entities.ts';
import { buy, call, createBenefit, grantOf, grantSeller, productWith, startGrantEnv, until, type GrantEnv, type Purchase, type Seller } from './helpers.ts';

let env: GrantEnv;
let s: Seller;

beforeAll(async () => {
  env = await startGrantEnv();
  s = await grantSeller(env.srv);
});
afterAll(async () => {
  await env?.close();
});

interface Credited {
  meter_id: string;
  units: number;
  reason?: string;
}

async function creditEvents(p: Purchase, meterId: string): Promise<Credited[]> {
  const res = await call(env.srv.url, s.token, 'GET', `/v1/events/?name=meter_credited&customer_id=${p.customerId}&limit=100`);
  expect(res.status).toBe(200);
  return (res.body.items as { metadata: Credited }[]).map((e) => e.metadata).filter((m) => m.meter_id === meterId);
}

async function waitForCredits(p: Purchase, meterId: string, n: number): Promise<Credited[]> {
  let seen: Credited[] = [];
  try {
    return await until(async () => {
      seen = await creditEvents(p, meterId);
      return seen.length === n ? seen : null;
    });
  } catch (err) {
    throw new Error(`${n} credit events expected, saw ${JSON.stringify(seen)}`, { cause: err });
  }
}

const sum = (events: Credited[]) => events.reduce((t, e) => t + e.units, 0);
const sorted = (events: Credited[]) => events.map((e) => e.units).sort((a, b) => a - b);

/** What a renewal's usage billing records: `used` units of the meter's credits consumed in a period. */
async function consume(p: Purchase, meterId: string, used: number, periodEnd: Date) {
  const em = env.srv.deps.orm.em.fork();
  const sub = await em.findOneOrFail(Subscription, { id: p.subscriptionId! });
  em.create(MeteredBilling, {
    subscription: sub,
    customer: sub.customer,
    meter: meterId,
    price: sub.price,
    order: null,
    periodStart: new Date(periodEnd.getTime() - 30 * 86_400_000),
    periodEnd,
    billedThrough: periodEnd,
    usage: String(used),
    creditsUsed: String(used),
    billableUnits: '0',
    unitAmount: '0',
    capAmount: null,
    amount: 0,
  });
  await em.flush();
}

async function meter(name: string): Promise<string> {
  const res = await call(env.srv.url, s.token, 'POST', '/v1/meters/', { name, filter: { conjunction: 'and', clauses: [] }, aggregation: { func: 'count' } });
  expect(res.status).toBe(201);
  return res.body.id as string;
}

describe('meter credits across cycles', { timeout: 240_000 }, () => {
  it('expires unused credits without rollover, carries them with rollover, and revokes no more than the balance', async () => {
    const { srv } = env;
    const [expiring, carried] = [await meter(`Calls ${randomUUID().slice(0, 4)}`), await meter(`Tokens ${randomUUID().slice(0, 4)}`)];
    const noRollover = await createBenefit(srv, s, { type: 'meter_credit', description: '500 calls a month', properties: { units: 500, meter_id: expiring, rollover: false } });
    const rollover = await createBenefit(srv, s, { type: 'meter_credit', description: '200 tokens a month', properties: { units: 200, meter_id: carried, rollover: true } });
    const productId = await productWith(srv, s, [noRollover, rollover], true);
    const p = await buy(srv, s, productId);
    await grantOf(srv, s, noRollover, p.customerId);
    await grantOf(srv, s, rollover, p.customerId);
    expect(sorted(await waitForCredits(p, expiring, 1))).toEqual([500]);
    expect(sorted(await waitForCredits(p, carried, 1))).toEqual([200]);

    // The first period's usage used 300 of the 500 calls and 50 of the 200 tokens.
    const firstEnd = new Date(Date.now() - 60_000);
    await consume(p, expiring, 300, firstEnd);
    await consume(p, carried, 50, firstEnd);

    // The next cycle: the 200 unused calls expire before 500 new ones; the 150 unused tokens stay.
    const scope = { customerId: p.customerId, productId, subscriptionId: p.subscriptionId, orderId: randomUUID() };
    await requestBenefitAction(srv.deps, 'grant', scope);
    const calls = await waitForCredits(p, expiring, 3);
    expect(sorted(calls)).toEqual([-200, 500, 500]);
    expect(calls.find((e) => e.units < 0)?.reason).toBe('expired');
    expect(sum(calls) - 300).toBe(500);
    const tokens = await waitForCredits(p, carried, 2);
    expect(sorted(tokens)).toEqual([200, 200]);
    expect(sum(tokens) - 50).toBe(350);

    // The same cycle's order again changes nothing.
    await requestBenefitAction(srv.deps, 'grant', scope);

    // The second period used 450 of the 500 calls; the subscription ends: only what is left is taken back.
    await consume(p, expiring, 450, new Date(Date.now() - 30_000));
    await requestBenefitAction(srv.deps, 'revoke', scope);
    await grantOf(srv, s, noRollover, p.customerId, (g) => g.is_revoked);
    await grantOf(srv, s, rollover, p.customerId, (g) => g.is_revoked);
    const callsAfter = await waitForCredits(p, expiring, 4);
    expect(sorted(callsAfter)).toEqual([-200, -50, 500, 500]);
    expect(sum(callsAfter) - 300 - 450).toBe(0);
    const tokensAfter = await waitForCredits(p, carried, 3);
    expect(sorted(tokensAfter)).toEqual([-350, 200, 200]);
    expect(sum(tokensAfter) - 50).toBe(0);
  });
});
