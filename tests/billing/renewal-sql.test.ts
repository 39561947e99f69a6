/**
 * The renewal's plain-SQL common case (subscriptions/renewal-sql.ts) writes what the ORM path
 * (renewal.ts, charging.ts) writes: two identical subscriptions, one renewed and charged by each, end
 * with the same subscription row, order, metered billings and webhook events (types, order and
 * payloads), ids and times aside. The cases: fixed + metered with a repeating discount and tax; a trial
 * converted by its first charge (the SQL renewal, then the ORM's outcome); usage covered by credits
 * (nothing to charge, paid at once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';
import { renewAndChargeSubscription } from '../../api/src/modules/subscriptions/service.ts';
import { setPlainSqlRenewals } from '../../api/src/modules/subscriptions/renewal-sql.ts';
import type { Lifecycle } from '../subscriptions/lifecycle-helpers.ts';
import { credit, ingest, seedMetered, startBilling, type MeteredSeed } from './helpers.ts';

const DAY = 86_400_000;
let lc: Lifecycle;

beforeAll(async () => {
  lc = await startBilling();
});
afterAll(async () => {
  setPlainSqlRenewals(true);
  await lc?.close();
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ISO = /^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d(:?\d\d)?)$/;

/** Ids numbered in order of appearance, times as `time`, the random email out; keys sorted. */
function normalize(v: unknown, ids: Map<string, string>): unknown {
  if (v instanceof Date) return 'time';
  if (typeof v === 'string') {
    if (UUID.test(v)) {
      if (!ids.has(v)) ids.set(v, `id${ids.size}`);
      return ids.get(v);
    }
    return ISO.test(v) ? 'time' : v;
  }
  if (Array.isArray(v)) return v.map((x) => normalize(x, ids));
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, k === 'email' || k === 'avatar_url' || k === 'processor_charge_id' ? typeof o[k] : normalize(o[k], ids)]),
    );
  }
  return v;
}

/** What a renewal left: the subscription row, its orders, metered billings and the organization's events. */
async function written(seed: MeteredSeed) {
  const em = lc.deps.orm.em.fork();
  const ids = new Map<string, string>();
  const q = (sql: string, p: unknown[]) => em.execute<Record<string, unknown>[]>(sql, p);
  const subscription = await q('select * from subscriptions where id = ?', [seed.subscriptionId]);
  const orders = await q('select * from orders where subscription_id = ? order by created_at', [seed.subscriptionId]);
  const billings = await q('select * from metered_billings where subscription_id = ? order by period_end', [seed.subscriptionId]);
  const events = await q('select type, data from outbox_events where organization_id = ? order by seq', [seed.orgId]);
  return normalize({ subscription, orders, billings, events }, ids);
}

const cases = [
  {
    name: 'fixed and metered prices with a repeating discount and tax, charged',
    seed: { fixedAmount: 1999, unitAmount: '0.5', capAmount: 5000, discount: { basisPoints: 2500, months: 3 }, tax: { country: 'DE', basisPoints: 1900 } },
    units: [40, 100, 70],
    credits: 30,
  },
  { name: 'a trial converted by its first charge', seed: { fixedAmount: 1000, unitAmount: '1.25', capAmount: null, status: 'trialing' as const }, units: [8], credits: 0 },
  { name: 'usage covered by credits: nothing to charge, paid at once', seed: { fixedAmount: null, unitAmount: '2', capAmount: null }, units: [10, 5], credits: 100 },
];

describe('plain-SQL renewals', () => {
  for (const c of cases) {
    it(`write what the ORM path writes: ${c.name}`, async () => {
      const startedAt = new Date(Date.now() - 40 * DAY);
      const renewAndCharge = async (plainSql: boolean) => {
        const seed = await seedMetered(lc, { startedAt, ...c.seed });
        await ingest(lc, seed, new Date(startedAt.getTime() + DAY), c.units);
        if (c.credits) await credit(lc, seed, c.credits);
        const row = await lc.deps.orm.em.fork().findOneOrFail(Subscription, { id: seed.subscriptionId });
        setPlainSqlRenewals(plainSql);
        const expected = row.currentPeriodEnd!.toISOString();
        const result = await renewAndChargeSubscription(lc.deps.orm.em.fork(), lc.deps.processor, seed.subscriptionId, expected, { settleMs: 0 });
        return { result: normalize(result, new Map()), written: await written(seed) };
      };
      const orm = await renewAndCharge(false);
      const sql = await renewAndCharge(true);
      expect(orm.result).toMatchObject({ outcome: 'charge', paid: true, status: 'active' });
      expect((orm.written as { orders: unknown[] }).orders).toHaveLength(1);
      expect(sql).toEqual(orm);
    });
  }
});
