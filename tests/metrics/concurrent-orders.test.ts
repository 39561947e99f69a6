/**
 * Two purchases of one product in the same quarter hour share the metrics aggregate rows. Their
 * transactions must not wait for each other until they commit (the aggregates are kept at commit),
 * and after both commit the metrics count both, as they do when one rolls back.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { computeMetricsFromBuckets } from '../../api/src/modules/metrics/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct, sellerWithSdk } from '../catalogue/helpers-c.ts';
import { insertCustomer } from '../catalogue/helpers-b.ts';

let srv: TestServer;
let refs: { organizationId: string; customerId: string; productId: string; priceId: string };

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  const seller = await sellerWithSdk(srv, ['metrics:read', 'products:read', 'products:write']);
  const product = await createProduct(srv.url, seller.token, {
    name: 'E-book',
    prices: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }],
  });
  const customer = await insertCustomer(srv, seller.organization.id);
  refs = { organizationId: seller.organization.id, customerId: customer.id, productId: product.id, priceId: product.prices[0]!.id };
});
afterAll(async () => {
  await srv?.close();
});

const AT = '2025-06-10T10:05:00.000Z';

async function orderIn(client: pg.Client, net: number): Promise<void> {
  await client.query(
    `insert into orders (id, created_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status,
       billing_reason, subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, refunded_amount,
       refunded_tax_amount, currency, custom_field_data, metadata)
     values ($1, $2, $3, $4, $5, $6, null, 'paid', 'purchase', $7, 0, $7, 0, $7, 0, 0, 'usd', '{}'::jsonb, '{}'::jsonb)`,
    [randomUUID(), AT, refs.organizationId, refs.customerId, refs.productId, refs.priceId, net],
  );
}

async function dayFigures() {
  const periods = await computeMetricsFromBuckets(srv.deps.orm.em.fork(), {
    startDate: '2025-06-10',
    endDate: '2025-06-10',
    interval: 'day',
    timezone: 'UTC',
    organizationIds: [refs.organizationId],
  });
  const p = periods!.find((x) => x.timestamp.toISOString().startsWith('2025-06-10'))!;
  return { orders: p.orders, revenue: p.revenue };
}

it('lets two open purchases of one product proceed side by side, and counts both once committed', async () => {
  const first = new pg.Client({ connectionString: srv.databaseUrl });
  const second = new pg.Client({ connectionString: srv.databaseUrl });
  const third = new pg.Client({ connectionString: srv.databaseUrl });
  await Promise.all([first.connect(), second.connect(), third.connect()]);
  try {
    await first.query('begin');
    await orderIn(first, 1000);
    await second.query('begin');
    // Waiting on the first transaction's aggregate row would hit this timeout (55P03).
    await second.query(`set local lock_timeout = '2s'`);
    await orderIn(second, 2500);
    await third.query('begin');
    await orderIn(third, 700);
    await third.query('rollback');
    await Promise.all([first.query('commit'), second.query('commit')]);
    expect(await dayFigures()).toMatchObject({ orders: 2, revenue: 3500 });
  } finally {
    await Promise.all([first.end(), second.end(), third.end()]);
  }
});
