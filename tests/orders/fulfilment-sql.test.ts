/**
 * The common fulfilment in plain SQL (orders/fulfilment-sql.ts) against the ORM path (fulfilment.ts)
 * on identical input: one buyer per side buys the same one-time product twice (a license key with
 * prefix, expiry, activation and usage limits, and a custom note; the second purchase finds the
 * first purchase's grants in the customer's state), with the plain-SQL path off on
 * one side and on on the other. Both must write the same orders, grants, license keys, checkouts and
 * payment methods and the same events in the same order, with ids, keys, e-mail addresses and charge
 * ids masked (each distinct value becomes a numbered placeholder in order of appearance, so a value
 * shared within one side stays shared) and timestamps masked. A product without benefits too, and a
 * monthly product, which the plain-SQL path leaves to the ORM path.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainSqlFulfilmentStats, setPlainSqlFulfilment } from '../../api/src/modules/orders/fulfilment-sql.ts';
import { buy, createBenefit, grantSeller, productWith, startGrantEnv, type GrantEnv, type Seller } from '../grants/helpers.ts';
import { masked } from '../masking.ts';

let env: GrantEnv;
let s: Seller;

beforeAll(async () => {
  env = await startGrantEnv();
  s = await grantSeller(env.srv);
});
afterAll(async () => {
  setPlainSqlFulfilment(true);
  await env?.close();
});

const SECRET = /polar_(c|cst)_[A-Za-z0-9_-]+/g;
const UUID = /[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}/g;
const DISPLAY = /\*\*\*\*-[0-9A-F]{6}/g;
const EMAIL = /[a-z0-9.+-]+@example\.com/g;
const TIME = /\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}(:\d{2})?)/g;
const GRAVATAR = /avatar\/[0-9a-f]{32}/g;
const CHARGE = /\b(ch|cus|pm|sbx|pi|seti)_[A-Za-z0-9_-]+/g;

/** What `masked` replaces in the compared JSON, in this order. */
const KINDS = [['secret', SECRET], ['id', UUID], ['display', DISPLAY], ['email', EMAIL], ['time', TIME], ['charge', CHARGE], ['gravatar', GRAVATAR]] as const;

/** Everything the fulfilments of these checkouts wrote, in order. */
async function written(checkoutIds: string[], customerId: string) {
  const em = env.srv.deps.orm.em.fork();
  const out: unknown[] = [];
  for (const checkoutId of checkoutIds) {
    const [checkout] = await em.execute<Record<string, unknown>[]>(`select status, customer_id, modified_at is not null as modified from checkouts where id = ?`, [checkoutId]);
    const orders = await em.execute<Record<string, unknown>[]>(`select * from orders where checkout_id = ?`, [checkoutId]);
    const orderId = orders[0]?.id ?? '00000000-0000-0000-0000-000000000000';
    const grants = await em.execute(
      `select g.*, b.description from benefit_grants g join benefits b on b.id = g.benefit_id where g.order_id = ? order by b.description`,
      [orderId],
    );
    const keys = await em.execute(
      `select k.* from license_keys k join benefit_grants g on g.properties->>'license_key_id' = k.id::text where g.order_id = ? order by k.created_at`,
      [orderId],
    );
    const events = await em.execute(
      `select type, data from outbox_events
        where data->>'id' = ? or data->>'order_id' = ? or (type = 'checkout.updated' and data->>'id' = ? and data->>'status' = 'succeeded')
        order by seq`,
      [orderId, orderId, checkoutId],
    );
    out.push({ checkout, orders, grants, keys, events });
  }
  const methods = await em.execute(`select * from payment_methods where customer_id = ? order by created_at`, [customerId]);
  const states = await em.execute<{ data: { granted_benefits: { benefit_type: string; granted_at: string }[] } }[]>(
    `select data from outbox_events where type = 'customer.state_changed' and data->>'id' = ? order by seq`,
    [customerId],
  );
  // Grants written in the same millisecond are listed by their random ids on either path: compared by type, then time.
  for (const { data } of states) {
    data.granted_benefits.sort((a, b) => a.benefit_type.localeCompare(b.benefit_type) || a.granted_at.localeCompare(b.granted_at));
  }
  return masked({ purchases: out, methods, states }, KINDS);
}

/** One buyer buys `productId` `times` times with the plain-SQL path `on` or off; answers what was written and how many fulfilments took the plain path. */
async function side(productId: string, times: number, on: boolean) {
  setPlainSqlFulfilment(on);
  const used = plainSqlFulfilmentStats.used;
  const email = `same-${randomUUID().slice(0, 8)}@example.com`;
  const checkouts: string[] = [];
  let customerId = '';
  for (let i = 0; i < times; i++) {
    const p = await buy(env.srv, s, productId, email);
    checkouts.push(p.checkoutId);
    customerId = p.customerId;
  }
  const plain = plainSqlFulfilmentStats.used - used;
  setPlainSqlFulfilment(true);
  return { plain, rows: await written(checkouts, customerId) };
}

describe('the fulfilment in plain SQL and through the ORM', () => {
  it('write the same rows and events for a license key and a custom benefit, bought twice by one customer', async () => {
    const license = await createBenefit(env.srv, s, {
      type: 'license_keys',
      description: 'a License',
      properties: { prefix: 'emp', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enable_customer_admin: true }, limit_usage: 50 },
    });
    const custom = await createBenefit(env.srv, s, { type: 'custom', description: 'b Support', properties: { note: 'Mail vip@example.com' } });
    const productId = await productWith(env.srv, s, [license, custom]);
    const orm = await side(productId, 2, false);
    const sql = await side(productId, 2, true);
    expect(orm.plain).toBe(0);
    expect(sql.plain).toBe(2);
    const rows = sql.rows as { purchases: { orders: unknown[]; grants: unknown[]; keys: unknown[]; events: { type: string }[] }[]; methods: unknown[]; states: unknown[] };
    expect(rows.purchases.map((x) => [x.orders.length, x.grants.length, x.keys.length])).toEqual([[1, 2, 1], [1, 2, 1]]);
    expect(rows.purchases[0]!.events.map((e) => e.type)).toEqual([
      'order.created', 'order.paid', 'benefit_grant.created', 'benefit_grant.created', 'checkout.updated',
    ]);
    expect(rows.states).toHaveLength(2);
    expect(sql.rows).toEqual(orm.rows);
  });

  it('write the same rows and events for a product without benefits', async () => {
    const productId = await productWith(env.srv, s, []);
    const orm = await side(productId, 1, false);
    const sql = await side(productId, 1, true);
    expect([orm.plain, sql.plain]).toEqual([0, 1]);
    expect(sql.rows).toEqual(orm.rows);
  });

  it('leaves a monthly product to the ORM path', async () => {
    const productId = await productWith(env.srv, s, [await createBenefit(env.srv, s, { type: 'custom', description: 'Monthly note', properties: { note: 'hi' } })], true);
    const sql = await side(productId, 1, true);
    expect(sql.plain).toBe(0);
    const rows = sql.rows as { purchases: { orders: { billing_reason: string; subscription_id: string | null }[] }[] };
    expect(rows.purchases[0]!.orders.map((o) => o.billing_reason)).toEqual(['subscription_create']);
  });
});
