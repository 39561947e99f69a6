/**
 * The unfiltered orders, subscriptions and customers lists answer `pagination.total_count` from the
 * counts kept beside the rows (`list_counts`, kept by triggers in the writing transaction). After
 * concurrent writes of every kind, through the API (purchases fulfilled by the worker, customers
 * created and deleted) and from other processes (psql: inserts, COPY, soft deletes and undeletes, a
 * row moved to another organization, a customer deleted with its orders and subscriptions by the
 * foreign keys' cascade, an order deleted), every list's `total_count` and `max_page` must be what a
 * `count(*)` of the list's rows says, for each organization, and a filtered list's count too.
 */
import { exec as execCb, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createProduct } from '../checkouts/helpers.ts';
import { buyer, call as callOnce, confirmRaw, confirmSeller, fulfilled, newCheckout, type Seller } from '../confirm/helpers.ts';

const exec = promisify(execCb);

/**
 * `call`, a GET tried again once when the connection was reset (a kept-alive socket the server closed
 * as the request went out: seen on this machine under load, not an answer of the API); a failure
 * names the request.
 */
async function call(url: string, token: string | null, method: string, path: string, body?: unknown) {
  try {
    return await callOnce(url, token, method, path, body);
  } catch (err) {
    if (method === 'GET') return callOnce(url, token, method, path, body);
    throw new Error(`${method} ${path}: ${String(err)}`, { cause: err });
  }
}
let srv: TestServer;
let a: Seller;
let b: Seller;
let products: { id: string }[] = [];

beforeAll(async () => {
  srv = await startTestServer();
  a = await confirmSeller(srv);
  b = await confirmSeller(srv);
  products = [
    await createProduct(srv.url, a.token, { name: 'Once', prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }] }),
    await createProduct(srv.url, a.token, { name: 'Monthly', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 900, price_currency: 'usd' }] }),
  ];
}, 120_000);

afterAll(async () => {
  await srv?.close();
});

const psql = (sql: string) => execFileSync('psql', [srv.databaseUrl, '-v', 'ON_ERROR_STOP=1', '-Atqc', sql]).toString().trim();
/** psql in another process, not waited for here: runs beside the other writes. */
const psqlAsync = (sql: string) => exec(`psql "${srv.databaseUrl}" -v ON_ERROR_STOP=1 -Atqc "${sql.replace(/"/g, '\\"')}"`);

/** A copy of `table`'s rows matched by `where`, with new ids and the given columns replaced (SQL over `t`). */
const copies = (table: string, where: string, set: string) =>
  `select (jsonb_populate_record(null::${table}, to_jsonb(t) || jsonb_build_object('id', gen_random_uuid(), ${set}))).* from ${table} t where ${where}`;

async function purchase(productId: string, email: string) {
  const checkout = await newCheckout(srv, a, productId);
  const res = await confirmRaw(srv, checkout.client_secret, { ...buyer(email), confirmation_token_id: 'tok_visa' });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(await fulfilled(srv, a, checkout.id)).toBe('succeeded');
}

const LISTS = [
  ['/v1/orders/', 'orders', 'true'],
  ['/v1/subscriptions/', 'subscriptions', 'true'],
  ['/v1/customers/', 'customers', 'deleted_at is null'],
] as const;

/** Every unfiltered list of `s` answers the `count(*)` of its rows; so does one page further, and a filtered list. */
async function expectCounts(s: Seller) {
  for (const [path, table, shown] of LISTS) {
    const count = Number(psql(`select count(*) from ${table} where organization_id = '${s.organization.id}' and ${shown}`));
    for (const qs of ['?limit=1', '?limit=3&page=2', '']) {
      const r = await call(srv.url, s.token, 'GET', `${path}${qs}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const limit = Number(new URLSearchParams(qs).get('limit') ?? 10);
      expect(r.body.pagination, `${path}${qs}`).toEqual({ total_count: count, max_page: Math.ceil(count / limit) });
    }
  }
  const first = psql(`select id from customers where organization_id = '${s.organization.id}' and deleted_at is null order by created_at limit 1`);
  if (first) {
    const mine = Number(psql(`select count(*) from orders where customer_id = '${first}'`));
    const r = await call(srv.url, s.token, 'GET', `/v1/orders/?customer_id=${first}&limit=1`);
    expect(r.body.pagination.total_count).toBe(mine);
  }
}

describe('list counts kept beside the rows', () => {
  it('start from the rows and follow concurrent writes through the API and psql, per organization', async () => {
    await expectCounts(a);
    const org = a.organization.id;
    await Promise.all([
      ...[0, 1, 2, 3].map((n) => purchase(products[n % 2]!.id, `buyer${n}@example.com`)),
      ...Array.from({ length: 12 }, (_, n) =>
        call(srv.url, a.token, 'POST', '/v1/customers/', { email: `api${n}@example.com`, name: `Api ${n}` }).then((r) => expect(r.status, JSON.stringify(r.body)).toBe(201)),
      ),
      call(srv.url, b.token, 'POST', '/v1/customers/', { email: 'b@example.com' }).then((r) => expect(r.status).toBe(201)),
    ]);
    await expectCounts(a);
    await expectCounts(b);

    // Concurrent transactions in other processes, several rows per statement.
    await Promise.all([
      ...[0, 1, 2, 3].map((n) => psqlAsync(`insert into customers ${copies('customers', `organization_id = '${org}' and email like 'api%'`, `'email', 'p${n}-' || t.email, 'external_id', null`)}`)),
      ...[0, 1, 2].map(() => psqlAsync(`insert into orders ${copies('orders', `organization_id = '${org}'`, `'checkout_id', null`)}`)),
      ...[0, 1].map(() => psqlAsync(`insert into subscriptions ${copies('subscriptions', `organization_id = '${org}'`, `'checkout_id', null`)}`)),
      psqlAsync(`update customers set deleted_at = now() where organization_id = '${org}' and email like 'api1%'`),
    ]);
    await expectCounts(a);

    // Customers deleted through the API (soft), one undeleted, one moved to the other organization.
    const live = (await call(srv.url, a.token, 'GET', '/v1/customers/?limit=100')).body.items as { id: string; email: string }[];
    const api = live.filter((c) => c.email.startsWith('api'));
    await Promise.all(api.slice(0, 4).map((c) => call(srv.url, a.token, 'DELETE', `/v1/customers/${c.id}`).then((r) => expect(r.status).toBe(204))));
    psql(`update customers set deleted_at = null where id = '${api[0]!.id}'`);
    psql(`update customers set deleted_at = deleted_at where id = '${api[1]!.id}'`);
    psql(`update customers set organization_id = '${b.organization.id}' where id = '${api[5]!.id}'`);
    await expectCounts(a);
    await expectCounts(b);

    // COPY, a customer deleted with its orders and subscriptions (cascade), an order deleted.
    execFileSync('sh', ['-c', `psql "${srv.databaseUrl}" -Atqc "copy (${copies('orders', `organization_id = '${org}' and checkout_id is not null`, `'checkout_id', null`)}) to stdout" | psql "${srv.databaseUrl}" -v ON_ERROR_STOP=1 -qc "copy orders from stdin"`]);
    await expectCounts(a);
    const buyerId = psql(`select customer_id from subscriptions where organization_id = '${org}' limit 1`);
    expect(Number(psql(`select count(*) from orders where customer_id = '${buyerId}'`))).toBeGreaterThan(0);
    psql(`delete from customers where id = '${buyerId}'`);
    psql(`delete from orders where id = (select id from orders where organization_id = '${org}' limit 1)`);
    await expectCounts(a);
    await expectCounts(b);
    expect(Number(psql(`select count(*) from orders where organization_id = '${org}'`))).toBeGreaterThan(10);
  }, 180_000);
});

describe('list counts under concurrent transactions', () => {
  /** Two open transactions on the same counter shard (their transaction ids equal modulo 16). */
  async function sameShardPair() {
    const { Client } = (await import('pg')).default;
    const c1 = new Client({ connectionString: srv.databaseUrl });
    const c2 = new Client({ connectionString: srv.databaseUrl });
    await c1.connect();
    await c2.connect();
    await c1.query('begin');
    const x1 = BigInt((await c1.query('select pg_current_xact_id()::text as x')).rows[0].x);
    for (let tries = 0; ; tries++) {
      expect(tries).toBeLessThan(200);
      await c2.query('begin');
      const x2 = BigInt((await c2.query('select pg_current_xact_id()::text as x')).rows[0].x);
      if (x2 % 16n === x1 % 16n) break;
      await c2.query('rollback');
    }
    return [c1, c2] as const;
  }

  it('two transactions of one organization writing two lists in opposite orders both commit, and the counts hold', async () => {
    const org = a.organization.id;
    const customer = `insert into customers ${copies('customers', `id = (select id from customers where organization_id = '${org}' and deleted_at is null limit 1)`, `'email', gen_random_uuid() || '@example.com', 'external_id', null`)}`;
    const order = `insert into orders ${copies('orders', `id = (select id from orders where organization_id = '${org}' limit 1)`, `'checkout_id', null`)}`;
    const [c1, c2] = await sameShardPair();
    try {
      await c1.query(customer);
      await c2.query(order);
      // Each now writes the list the other wrote: with a lock held on one counter row until commit and
      // waited for by the other, PostgreSQL ends one of them as a deadlock.
      const settled = await Promise.allSettled([c1.query(order), c2.query(customer)]);
      expect(settled.map((s) => (s.status === 'rejected' ? String(s.reason) : 'ok'))).toEqual(['ok', 'ok']);
      await Promise.all([c1.query('commit'), c2.query('commit')]);
    } finally {
      await Promise.allSettled([c1.end(), c2.end()]);
    }
    await expectCounts(a);
  }, 60_000);

  it('many concurrent single-row writes of one organization keep the counts, and the counter rows stay few', async () => {
    const org = a.organization.id;
    await Promise.all(Array.from({ length: 24 }, (_, n) =>
      psqlAsync(`begin; insert into orders ${copies('orders', `id = (select id from orders where organization_id = '${org}' limit 1)`, `'checkout_id', null`)}; select pg_sleep(0.${n % 3}); commit;`)));
    await expectCounts(a);
    expect(Number(psql(`select count(*) from list_counts where organization_id = '${org}' and kind = 'orders'`))).toBeLessThanOrEqual(40);
  }, 60_000);

  it('an organization deleted leaves no counter rows behind', async () => {
    const s = await confirmSeller(srv);
    const r = await call(srv.url, s.token, 'POST', '/v1/customers/', { email: 'gone@example.com' });
    expect(r.status).toBe(201);
    expect(Number(psql(`select count(*) from list_counts where organization_id = '${s.organization.id}'`))).toBeGreaterThan(0);
    psql(`delete from organizations where id = '${s.organization.id}'`);
    expect(psql(`select count(*) from list_counts where organization_id = '${s.organization.id}'`)).toBe('0');
    await expectCounts(a);
  }, 60_000);
});
