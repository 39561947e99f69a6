/**
 * GET /v1/customer-portal/customer-meters/ and /{id} through HTTP with a customer session: a metered
 * subscription with known events and meter credits → the period's usage, credits, balance and usage
 * charge to the unit and cent (the same figures as the seller's upcoming invoice), the list after new
 * events, filters, sorting validation, another customer's meter 404, no session 401.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { credit, ingest, seedMetered, type MeteredSeed } from '../billing/helpers.ts';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { Meter } from '../../api/src/modules/meters/entities.ts';
import { periodEnd } from '../../api/src/modules/pricing/index.ts';
import { Product, ProductPrice } from '../../api/src/modules/products/entities.ts';
import { Subscription } from '../../api/src/modules/subscriptions/entities.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const DAY = 86_400_000;

async function customerToken(sellerToken: string, customerId: string): Promise<string> {
  const res = await fetch(`${server.url}/v1/customer-sessions/`, {
    method: 'POST',
    headers: { authorization: `Bearer ${sellerToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ customer_id: customerId }),
  });
  expect(res.status).toBe(201);
  return (await json(res)).token;
}

const get = (token: string | null, path: string) =>
  fetch(`${server.url}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });

async function meteredCustomer(startedAt: Date): Promise<{ seed: MeteredSeed; token: string; sellerToken: string }> {
  const a = await seller(server.url, ['subscriptions:read', 'customer_sessions:write']);
  const seed = await seedMetered(server, {
    orgId: a.organization.id,
    startedAt,
    fixedAmount: 1000,
    unitAmount: '0.5',
    capAmount: 400,
    discount: { basisPoints: 2000, months: 12 },
    tax: { country: 'DE', basisPoints: 1900 },
  });
  return { seed, token: await customerToken(a.token, seed.customerId), sellerToken: a.token };
}

/**
 * A second metered subscription of the same customer: a `name` meter counting `event` events, a
 * usage-only product priced `unitAmount` a unit; `count` events in its period.
 */
async function secondMeter(seed: MeteredSeed, name: string, event: string, unitAmount: string, count: number): Promise<string> {
  const em = server.deps.orm.em.fork();
  const first = await em.findOneOrFail(Subscription, { id: seed.subscriptionId }, { populate: ['paymentMethod'] });
  const meter = em.create(Meter, {
    organization: seed.orgId,
    name,
    filter: { conjunction: 'and', clauses: [{ property: 'name', operator: 'eq', value: event }] },
    aggregation: { func: 'count' },
    metadata: {},
  });
  const product = em.create(Product, { organization: seed.orgId, name: `${name} plan`, description: null, recurringInterval: 'month', isArchived: false, metadata: {} });
  const price = em.create(ProductPrice, {
    product, priceCurrency: 'usd', minimumAmount: null, maximumAmount: null, presetAmount: null, isArchived: false,
    amountType: 'metered_unit', priceAmount: null, meter, unitAmount, capAmount: null,
  });
  const startedAt = new Date(Date.now() - DAY);
  em.create(Subscription, {
    organization: seed.orgId, customer: seed.customerId, product, price, discount: null, checkout: null, amount: 0, currency: 'usd',
    recurringInterval: 'month', status: 'active', currentPeriodStart: startedAt, currentPeriodEnd: periodEnd(startedAt, 'month'),
    cancelAtPeriodEnd: false, canceledAt: null, startedAt, endsAt: null, endedAt: null, customerCancellationReason: null,
    customerCancellationComment: null, paymentMethod: first.paymentMethod, metadata: {},
  });
  await em.flush();
  const at = new Date(Date.now() - DAY / 2);
  await insertEvents(
    server.deps.orm.em.fork(),
    Array.from({ length: count }, () => ({ organizationId: seed.orgId, name: event, timestamp: at, customerId: seed.customerId, metadata: {} })),
    'user',
  );
  return meter.id;
}

describe('customer portal: customer meters', () => {
  it('shows the period usage, credits, balance and usage charge of each meter, and follows new events', async () => {
    const startedAt = new Date(Date.now() - 5 * DAY);
    const { seed, token, sellerToken } = await meteredCustomer(startedAt);
    await ingest(server, seed, new Date(Date.now() - 4 * DAY), [300, 201]);
    await ingest(server, seed, new Date(Date.now() - 6 * DAY), [10_000]); // before the period: not this period's usage
    await credit(server, seed, 100); // the meter_credited event a meter_credit grant writes

    const res = await get(token, '/v1/customer-portal/customer-meters/');
    expect(res.status).toBe(200);
    const list = await json(res);
    expect(list.pagination).toEqual({ total_count: 1, max_page: 1 });
    expect(list.items).toHaveLength(1);
    const m = list.items[0];
    // 501 units − 100 credits = 401 billable × 0.5 = 200.5 → 201; order discount 20 % of 1201 = 240, of which
    // this line 40 (largest remainder over 1000 and 201); tax 19 % of 961 = 183, of which this line's 161 net → 31.
    expect(m).toMatchObject({
      customer_id: seed.customerId,
      meter_id: seed.meterId,
      meter: { id: seed.meterId, name: 'API calls' },
      subscription_id: seed.subscriptionId,
      product_price_id: seed.meteredPriceId,
      period_start: startedAt.toISOString(),
      consumed_units: 501,
      credited_units: 100,
      balance: -401,
      credits_used: '100',
      billable_units: '401',
      currency: 'usd',
      unit_amount: '0.5',
      cap_amount: 400,
      amount: 201,
      discount_amount: 40,
      tax_amount: 31,
    });
    expect(new Date(m.period_end).getTime()).toBeGreaterThan(new Date(m.period_start).getTime());
    expect(m.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // The same figures as the seller's upcoming invoice of the subscription.
    const preview = await json(await get(sellerToken, `/v1/subscriptions/${seed.subscriptionId}/upcoming-invoice`));
    const usageLine = preview.lines.find((l: any) => l.meter_id === seed.meterId);
    expect([usageLine.amount, usageLine.discount_amount, usageLine.tax_amount]).toEqual([m.amount, m.discount_amount, m.tax_amount]);
    expect(preview.period_end).toBe(m.period_end);

    const one = await get(token, `/v1/customer-portal/customer-meters/${m.id}`);
    expect(one.status).toBe(200);
    expect(await json(one)).toEqual(m);

    // New events: the list follows, capped at 400 (1902 − 100 = 1802 × 0.5 = 901 → 400); the id stays.
    await ingest(server, seed, new Date(Date.now() - DAY), [1401]);
    const after = await json(await get(token, '/v1/customer-portal/customer-meters/'));
    expect(after.items.map((x: any) => [x.id, x.consumed_units, x.balance, x.billable_units, x.amount])).toEqual([[m.id, 1902, -1802, '1802', 400]]);

    // More credits than usage: nothing billed, a positive balance.
    await credit(server, seed, 2000);
    const credited = await json(await get(token, `/v1/customer-portal/customer-meters/${m.id}`));
    expect([credited.credited_units, credited.balance, credited.credits_used, credited.amount]).toEqual([2100, 198, '1902', 0]);
  });

  it('sorts and pages several meters of one customer', async () => {
    const { seed, token } = await meteredCustomer(new Date(Date.now() - 2 * DAY));
    await ingest(server, seed, new Date(Date.now() - DAY), [50]); // API calls: 50 used, balance −50
    const storage = await secondMeter(seed, 'Storage writes', 'storage_write', '2', 3); // 3 used, balance −3
    const exports = await secondMeter(seed, 'Exports', 'export', '10', 7); // 7 used, balance −7
    const order = async (q: string) => {
      const r = await get(token, `/v1/customer-portal/customer-meters/?${q}`);
      expect(r.status).toBe(200);
      const body = await json(r);
      return { ids: body.items.map((x: any) => x.meter_id), total: body.pagination.total_count, pages: body.pagination.max_page };
    };
    expect((await order('')).ids).toEqual([seed.meterId, exports, storage]); // by name by default
    expect((await order('sorting=-meter_name')).ids).toEqual([storage, exports, seed.meterId]);
    expect((await order('sorting=-consumed_units')).ids).toEqual([seed.meterId, exports, storage]);
    expect((await order('sorting=balance')).ids).toEqual([seed.meterId, exports, storage]);
    expect((await order('sorting=-balance')).ids).toEqual([storage, exports, seed.meterId]);
    expect(await order('sorting=consumed_units&limit=2&page=2')).toEqual({ ids: [seed.meterId], total: 3, pages: 2 });
    expect(await order('query=OR')).toEqual({ ids: [exports, storage], total: 2, pages: 1 });
    expect((await order(`meter_id=${storage}&meter_id=${seed.meterId}`)).ids).toEqual([seed.meterId, storage]);
    // Each meter's charge from its own subscription: API calls 50 × 0.5 = 25, its share of the 20 % discount of
    // 1025 (205 → 5) and of the 19 % tax on 820 (156 → 4); Exports 7 × 10 = 70, tax 13.3 → 13; Storage 3 × 2 = 6,
    // tax 1.14 → 1 (no discount on those subscriptions; the customer is in DE).
    const items = (await json(await get(token, '/v1/customer-portal/customer-meters/'))).items;
    expect(items.map((x: any) => [x.meter.name, x.subscription_id === seed.subscriptionId, x.consumed_units, x.amount, x.discount_amount, x.tax_amount])).toEqual([
      ['API calls', true, 50, 25, 5, 4],
      ['Exports', false, 7, 70, 0, 13],
      ['Storage writes', false, 3, 6, 0, 1],
    ]);
  });

  it('filters by meter and name, validates sorting, and shows nothing without a metered subscription', async () => {
    const { seed, token } = await meteredCustomer(new Date(Date.now() - 2 * DAY));
    const ids = async (q: string) => {
      const r = await get(token, `/v1/customer-portal/customer-meters/?${q}`);
      expect(r.status).toBe(200);
      return (await json(r)).items.map((x: any) => x.meter_id);
    };
    expect(await ids('query=api')).toEqual([seed.meterId]);
    expect(await ids('query=storage')).toEqual([]);
    expect(await ids(`meter_id=${seed.meterId}`)).toEqual([seed.meterId]);
    expect(await ids(`meter_id=${seed.customerId}`)).toEqual([]);
    expect(await ids('sorting=-balance&sorting=meter_name')).toEqual([seed.meterId]);
    expect(await ids('page=2')).toEqual([]);

    const bad = await get(token, '/v1/customer-portal/customer-meters/?sorting=price');
    expect(bad.status).toBe(422);
    expect((await json(bad)).detail[0].loc).toEqual(['query', 'sorting']);

    // A customer of the same seller without any subscription: an empty list.
    const a = await seller(server.url, ['customers:write', 'customer_sessions:write']);
    const c = await fetch(`${server.url}/v1/customers/`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: `plain-${Date.now()}@example.com` }),
    });
    expect(c.status).toBe(201);
    const plain = await customerToken(a.token, (await json(c)).id);
    const empty = await get(plain, '/v1/customer-portal/customer-meters/');
    expect(empty.status).toBe(200);
    expect(await json(empty)).toEqual({ items: [], pagination: { total_count: 0, max_page: 0 } });
  });

  it("answers 404 for another customer's meter and 401 without a session", async () => {
    const first = await meteredCustomer(new Date(Date.now() - 3 * DAY));
    const second = await meteredCustomer(new Date(Date.now() - 3 * DAY));
    const [mine] = (await json(await get(first.token, '/v1/customer-portal/customer-meters/'))).items;
    expect(mine.meter_id).toBe(first.seed.meterId);

    const other = await get(second.token, `/v1/customer-portal/customer-meters/${mine.id}`);
    expect(other.status).toBe(404);
    expect((await json(other)).error).toBe('ResourceNotFound');
    const theirs = (await json(await get(second.token, '/v1/customer-portal/customer-meters/'))).items;
    expect(theirs.map((x: any) => x.meter_id)).toEqual([second.seed.meterId]);

    expect((await get(null, '/v1/customer-portal/customer-meters/')).status).toBe(401);
    expect((await get(null, `/v1/customer-portal/customer-meters/${mine.id}`)).status).toBe(401);
    // A seller's token is not a customer session.
    expect((await get(first.sellerToken, '/v1/customer-portal/customer-meters/')).status).toBe(403);
  });
});
