/**
 * GET /v1/subscriptions/{id}/upcoming-invoice through HTTP: the next renewal's lines as they stand now
 * (price, usage so far with credits consumed first, discount, tax), per-meter usage and balance, and
 * another organization's subscription is a 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { credit, ingest, seedMetered } from './helpers.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ worker: false });
});
afterAll(async () => {
  await server?.close();
});

const DAY = 86_400_000;

describe('upcoming invoice', () => {
  it('previews the price, the usage so far after credits, the discount and tax', async () => {
    const a = await seller(server.url, ['subscriptions:read', 'customers:read']);
    const s = await seedMetered(server, {
      orgId: a.organization.id,
      startedAt: new Date(Date.now() - 5 * DAY),
      fixedAmount: 1000,
      unitAmount: '0.5',
      capAmount: 400,
      discount: { basisPoints: 2000, months: 12 },
      tax: { country: 'DE', basisPoints: 1900 },
    });
    await ingest(server, s, new Date(Date.now() - 4 * DAY), [300, 201]);
    await ingest(server, s, new Date(Date.now() - 6 * DAY), [10_000]); // before the period
    await credit(server, s, 100);

    const res = await fetch(`${server.url}/v1/subscriptions/${s.subscriptionId}/upcoming-invoice`, { headers: { authorization: `Bearer ${a.token}` } });
    expect(res.status).toBe(200);
    const body = await json(res);
    // 501 units − 100 credits = 401 × 0.5 = 200.5 → 201; 1000 + 201 = 1201; −20 % = 240.2 → 240; 961 + 19 % = 182.59 → 183.
    expect(body).toMatchObject({
      subscription_id: s.subscriptionId,
      currency: 'usd',
      will_renew: true,
      subtotal_amount: 1201,
      discount_amount: 240,
      net_amount: 961,
      tax_amount: 183,
      total_amount: 1144,
    });
    expect(body.lines.map((l: any) => [l.product_price_id, l.amount, l.usage, l.credits_used, l.billable_units])).toEqual([
      [s.fixedPriceId, 1000, null, null, null],
      [s.meteredPriceId, 201, '501', '100', '401'],
    ]);
    expect(body.lines.reduce((t: number, l: any) => t + l.tax_amount, 0)).toBe(183);
    expect(body.meters).toEqual([{ meter_id: s.meterId, name: 'API calls', consumed_units: '501', credited_units: '100', balance: '-401' }]);

    // Customer state: the meter's usage so far, credits and balance (Polar's active_meters).
    const state = await json(await fetch(`${server.url}/v1/customers/${s.customerId}/state`, { headers: { authorization: `Bearer ${a.token}` } }));
    expect(state.active_meters).toMatchObject([
      { meter_id: s.meterId, subscription_id: s.subscriptionId, consumed_units: 501, credited_units: 100, balance: -401 },
    ]);

    // The cap: 1501 more units → 1902 − 100 = 1802 × 0.5 = 901 → 400.
    await ingest(server, s, new Date(Date.now() - DAY), [1401]);
    const capped = await json(await fetch(`${server.url}/v1/subscriptions/${s.subscriptionId}/upcoming-invoice`, { headers: { authorization: `Bearer ${a.token}` } }));
    expect(capped.lines[1]).toMatchObject({ amount: 400, usage: '1902', cap_amount: 400 });

    const b = await seller(server.url, ['subscriptions:read']);
    const other = await fetch(`${server.url}/v1/subscriptions/${s.subscriptionId}/upcoming-invoice`, { headers: { authorization: `Bearer ${b.token}` } });
    expect(other.status).toBe(404);
  });
});
