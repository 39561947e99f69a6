/** Customer sessions: issued through the SDK, then usable as `polar_cst_` bearer tokens. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../api/src/kit/crypto.ts';
import { Customer } from '../../api/src/modules/customers/entities.ts';
import { CustomerSession } from '../../api/src/modules/customer-sessions/entities.ts';
import { resolveCustomerSessionToken } from '../../api/src/modules/customer-sessions/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, locs, sellerWithSdk } from './helpers-c.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  a = await sellerWithSdk(srv);
  b = await sellerWithSdk(srv);
});
afterAll(async () => {
  await srv?.close();
});

const rand = () => Math.random().toString(36).slice(2, 10);
const email = () => `portal-${rand()}@example.com`;
const publicUrl = () => srv.deps.cfg.PUBLIC_URL.replace(/\/+$/, '');

describe('customer sessions', () => {
  it('creates a session by customer id: one-hour token, portal URL, embedded customer', async () => {
    const c = await a.polar.customers.create({ email: email(), name: 'Portal User' });
    const before = Date.now();
    const s = await a.polar.customerSessions.create({ customerId: c.id });
    expect(s.token).toMatch(/^polar_cst_[A-Za-z0-9_-]{43}$/);
    expect(s.customerId).toBe(c.id);
    expect(s.customer).toMatchObject({ id: c.id, email: c.email, name: 'Portal User', organizationId: a.organization.id });
    expect(s.customerPortalUrl).toBe(`${publicUrl()}/portal/${a.organization.slug}?customer_session_token=${s.token}`);
    const ttl = s.expiresAt.getTime() - before;
    expect(ttl).toBeGreaterThan(59 * 60 * 1000);
    expect(ttl).toBeLessThanOrEqual(60 * 60 * 1000 + 5_000);
    expect(s.createdAt).toBeInstanceOf(Date);

    // Only the SHA-256 of the token is stored.
    const row = await srv.deps.orm.em.fork().findOneOrFail(CustomerSession, { id: s.id });
    expect(row.tokenHash).toBe(sha256Hex(s.token));
    expect(row.tokenHash).not.toContain(s.token);
  });

  it('creates a session by external id', async () => {
    const ext = `ext-${rand()}`;
    const c = await a.polar.customers.create({ email: email(), externalId: ext });
    const s = await a.polar.customerSessions.create({ customerExternalId: ext });
    expect(s.customerId).toBe(c.id);
    expect(s.customer.externalId).toBe(ext);
  });

  it('the token is a customer principal: recognised (403 on seller routes, not 401)', async () => {
    const c = await a.polar.customers.create({ email: email() });
    const s = await a.polar.customerSessions.create({ customerId: c.id });

    const principal = await resolveCustomerSessionToken(srv.deps.orm.em.fork(), s.token);
    expect(principal).toMatchObject({ kind: 'customer', customerId: c.id, organizationId: a.organization.id, sessionId: s.id });
    expect([...principal!.scopes].sort()).toEqual(['customer_portal:read', 'customer_portal:write']);

    const res = await call(srv.url, s.token, 'GET', '/v1/customers/');
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
    expect((await call(srv.url, s.token, 'GET', `/v1/customers/${c.id}`)).status).toBe(403);

    const unknown = await call(srv.url, `polar_cst_${'x'.repeat(43)}`, 'GET', '/v1/customers/');
    expect(unknown.status).toBe(401);
    expect(unknown.body.error).toBe('Unauthorized');
    expect(unknown.headers.get('www-authenticate')).toBe('Bearer');
  });

  it('stops working once expired or when the customer is deleted', async () => {
    const c1 = await a.polar.customers.create({ email: email() });
    const expired = await a.polar.customerSessions.create({ customerId: c1.id });
    await srv.deps.orm.em.fork().nativeUpdate(CustomerSession, { id: expired.id }, { expiresAt: new Date(Date.now() - 1000) });
    expect(await resolveCustomerSessionToken(srv.deps.orm.em.fork(), expired.token)).toBeNull();
    expect((await call(srv.url, expired.token, 'GET', '/v1/customers/')).status).toBe(401);

    const c2 = await a.polar.customers.create({ email: email() });
    const live = await a.polar.customerSessions.create({ customerId: c2.id });
    expect((await call(srv.url, live.token, 'GET', '/v1/customers/')).status).toBe(403);
    await a.polar.customers.delete({ id: c2.id });
    expect((await call(srv.url, live.token, 'GET', '/v1/customers/')).status).toBe(401);
  });

  it('refuses customers that are not the caller\'s (422 on the field) and bad bodies', async () => {
    const theirs = await b.polar.customers.create({ email: email(), externalId: `ext-${rand()}` });
    let res = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', { customer_id: theirs.id });
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.customer_id']);
    res = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', { customer_external_id: theirs.externalId });
    expect(locs(res.body)).toEqual(['body.customer_external_id']);
    res = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', {});
    expect(res.status).toBe(422);
    expect(locs(res.body)).toEqual(['body.customer_id']);
    res = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', { customer_id: 'nope' });
    expect(locs(res.body)).toEqual(['body.customer_id']);

    const deleted = await a.polar.customers.create({ email: email() });
    await a.polar.customers.delete({ id: deleted.id });
    res = await call(srv.url, a.token, 'POST', '/v1/customer-sessions/', { customer_id: deleted.id });
    expect(locs(res.body)).toEqual(['body.customer_id']);
    // Nothing was written for the refused calls.
    const count = await srv.deps.orm.em.fork().count(CustomerSession, { customer: { $in: [theirs.id, deleted.id] } });
    expect(count).toBe(0);
    expect(await srv.deps.orm.em.fork().count(Customer, { id: theirs.id, deletedAt: null })).toBe(1);
  });

  it('401 without a token, 403 without customer_sessions:write', async () => {
    const c = await a.polar.customers.create({ email: email() });
    const anon = await call(srv.url, null, 'POST', '/v1/customer-sessions/', { customer_id: c.id });
    expect(anon.status).toBe(401);
    const noScope = await sellerWithSdk(srv, ['customers:read', 'customers:write']);
    const mine = await noScope.polar.customers.create({ email: email() });
    const res = await call(srv.url, noScope.token, 'POST', '/v1/customer-sessions/', { customer_id: mine.id });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
  });
});
