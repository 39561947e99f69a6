/**
 * `GET /v1/customers/{id}/state` in one statement (customers/service.ts `visibleCustomerState`) against
 * the ORM path (`customerState`) on the same customers: a buyer with a granted license key and a
 * revoked-benefit-free state, by id and by external id, a customer with an active subscription (the
 * ORM path answers for both), and another organization's customer (404 on both).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setCustomerStateSql } from '../../api/src/modules/customers/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from './helpers.ts';
import { buyer, call, confirmRaw, confirmSeller, fulfilled, newCheckout, type Seller } from '../confirm/helpers.ts';

let srv: TestServer;
let s: Seller;
let other: Seller;

beforeAll(async () => {
  srv = await startTestServer();
  s = await confirmSeller(srv);
  other = await confirmSeller(srv);
});
afterAll(async () => {
  setCustomerStateSql(true);
  await srv?.close();
});

const fixed = (amount: number) => [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }];

/** The state read with the statement and with the ORM path, by the given path. */
async function both(seller: Seller, path: string) {
  setCustomerStateSql(true);
  const sql = await call(srv.url, seller.token, 'GET', path);
  setCustomerStateSql(false);
  const orm = await call(srv.url, seller.token, 'GET', path).finally(() => setCustomerStateSql(true));
  return { sql, orm };
}

async function buy(product: { id: string }, email: string, extra: Record<string, unknown> = {}) {
  const checkout = await newCheckout(srv, s, product.id, extra);
  const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email), confirmation_token_id: 'tok_visa' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(await fulfilled(srv, s, checkout.id)).toBe('succeeded');
  return res.body.customer_id as string;
}

describe('the customer state in one statement and through the ORM', () => {
  it('is the same for a buyer with a granted license key, by id and by external id', async () => {
    const benefit = await call(srv.url, s.token, 'POST', '/v1/benefits/', { type: 'license_keys', description: 'Key', properties: { prefix: 'st', limit_usage: 3 } });
    expect(benefit.status).toBe(201);
    const product = await createProduct(srv.url, s.token, { name: 'State app', prices: fixed(900) });
    expect((await call(srv.url, s.token, 'POST', `/v1/products/${product.id}/benefits`, { benefits: [benefit.body.id] })).status).toBe(200);
    const ext = `ext-${randomUUID().slice(0, 8)}`;
    const customerId = await buy(product, `state-${randomUUID().slice(0, 8)}@example.com`, { customer_external_id: ext });

    const byId = await both(s, `/v1/customers/${customerId}/state`);
    expect(byId.sql.status).toBe(200);
    expect(byId.sql.body.granted_benefits.map((g: { benefit_id: string; benefit_type: string }) => [g.benefit_id, g.benefit_type])).toEqual([
      [benefit.body.id, 'license_keys'],
    ]);
    expect(byId.sql.body).toEqual(byId.orm.body);
    expect(JSON.stringify(byId.sql.body)).toBe(JSON.stringify(byId.orm.body));

    const byExternal = await both(s, `/v1/customers/external/${ext}/state`);
    expect(byExternal.sql.status).toBe(200);
    expect(byExternal.sql.body.id).toBe(customerId);
    expect(JSON.stringify(byExternal.sql.body)).toBe(JSON.stringify(byExternal.orm.body));
  });

  it('is the ORM path\'s for a customer with an active subscription', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'State plan', prices: fixed(700), recurring_interval: 'month' });
    const customerId = await buy(product, `plan-${randomUUID().slice(0, 8)}@example.com`);
    const { sql, orm } = await both(s, `/v1/customers/${customerId}/state`);
    expect(sql.status).toBe(200);
    expect(sql.body.active_subscriptions.map((x: { product_id: string; status: string }) => [x.product_id, x.status])).toEqual([[product.id, 'active']]);
    expect(JSON.stringify(sql.body)).toBe(JSON.stringify(orm.body));
  });

  it('is 404 for another organization\'s customer on both', async () => {
    const product = await createProduct(srv.url, s.token, { name: 'State private', prices: fixed(500) });
    const customerId = await buy(product, `private-${randomUUID().slice(0, 8)}@example.com`);
    const { sql, orm } = await both(other, `/v1/customers/${customerId}/state`);
    expect(sql.status).toBe(404);
    expect(orm.status).toBe(404);
    expect(sql.body).toEqual(orm.body);
  });
});
