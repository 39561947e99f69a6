/** /v1/events through the official SDK (parsed results) and raw HTTP for the error bodies. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertEvents } from '../../api/src/modules/events/service.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, createCustomer, iso, usageSeller } from './events-helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

describe('event ingestion', () => {
  it('ingests by customer id and by external id, and the SDK parses the events with their customer', async () => {
    const s = await usageSeller(srv);
    const alice = await createCustomer(srv, s.organization.id, { externalId: 'alice-ext', name: 'Alice' });
    const bob = await createCustomer(srv, s.organization.id);
    const t0 = new Date(Date.now() - 3600_000);

    const res = await s.polar.events.ingest({
      events: [
        { name: 'api.call', customerId: bob.id, timestamp: t0, metadata: { route: '/v1/x', tokens: 12, cached: false } },
        { name: 'api.call', externalCustomerId: 'alice-ext', timestamp: new Date(t0.getTime() + 60_000), metadata: { tokens: 3 } },
        { name: 'upload', externalCustomerId: 'nobody-yet' },
      ],
    });
    expect(res).toEqual({ inserted: 3 });

    const list = await s.polar.events.list({ organizationId: s.organization.id });
    expect(list.result.pagination).toEqual({ totalCount: 3, maxPage: 1 });
    const items = list.result.items;
    // Newest first by default; the one without a timestamp got "now".
    expect(items.map((e) => e.name)).toEqual(['upload', 'api.call', 'api.call']);
    const byBob = items.find((e) => e.customerId === bob.id)!;
    expect(byBob).toMatchObject({
      name: 'api.call',
      source: 'user',
      organizationId: s.organization.id,
      externalCustomerId: null,
      metadata: { route: '/v1/x', tokens: 12, cached: false },
      customer: { id: bob.id, email: bob.email, organizationId: s.organization.id },
    });
    expect(byBob.timestamp).toEqual(t0);
    const byAlice = items.find((e) => e.externalCustomerId === 'alice-ext')!;
    expect(byAlice.customerId).toBeNull();
    expect(byAlice.customer).toMatchObject({ id: alice.id, externalId: 'alice-ext', name: 'Alice' });
    expect(items.find((e) => e.externalCustomerId === 'nobody-yet')!.customer).toBeNull();

    const one = await s.polar.events.get({ id: byBob.id });
    expect(one).toMatchObject({ id: byBob.id, name: 'api.call', customerId: bob.id, customer: { id: bob.id } });
  });

  it('accepts a batch of 1000 events in one request', async () => {
    const s = await usageSeller(srv);
    const base = Date.now() - 86_400_000;
    const events = Array.from({ length: 1000 }, (_, i) => ({
      name: 'tick',
      external_customer_id: `c-${i % 7}`,
      timestamp: iso(base + i * 1000),
      metadata: { i, even: i % 2 === 0, label: `n${i}` },
    }));
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', { events });
    expect(res).toEqual({ status: 200, body: { inserted: 1000 } });
    const list = await s.polar.events.list({ limit: 1 });
    expect(list.result.pagination.totalCount).toBe(1000);
  });

  it('is all or nothing: one bad item is a 422 at its index and nothing is stored', async () => {
    const s = await usageSeller(srv);
    const other = await usageSeller(srv);
    const foreign = await createCustomer(srv, other.organization.id);
    const future = iso(Date.now() + 3600_000);
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', {
      events: [
        { name: 'ok', external_customer_id: 'x' },
        { name: 'late', external_customer_id: 'x', timestamp: future },
        { name: 'foreign', customer_id: foreign.id },
        { name: 'org', external_customer_id: 'x', organization_id: s.organization.id },
      ],
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('RequestValidationError');
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([
        ['body', 'events', 1, 'timestamp'],
        ['body', 'events', 2, 'customer_id'],
        ['body', 'events', 3, 'organization_id'],
      ]),
    );
    expect(res.body.detail).toHaveLength(3);
    expect((await s.polar.events.list({})).result.pagination.totalCount).toBe(0);
  });

  it('validates each item: name, a customer identifier, offset datetimes, integer metadata', async () => {
    const s = await usageSeller(srv);
    const res = await call(srv, s.token, 'POST', '/v1/events/ingest', {
      events: [
        { external_customer_id: 'x' },
        { name: 'no-customer' },
        { name: 'naive', external_customer_id: 'x', timestamp: '2025-01-01T00:00:00' },
        { name: 'float', external_customer_id: 'x', metadata: { cost: 1.5 } },
      ],
    });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: { loc: unknown[] }) => d.loc.slice(0, 4));
    expect(locs).toEqual(
      expect.arrayContaining([
        ['body', 'events', 0, 'name'],
        ['body', 'events', 1, 'customer_id'],
        ['body', 'events', 2, 'timestamp'],
        ['body', 'events', 3, 'metadata'],
      ]),
    );
    expect((await call(srv, s.token, 'POST', '/v1/events/ingest', { events: [] })).status).toBe(422);
  });

  it('takes organization_id from a user session and requires it there', async () => {
    const s = await usageSeller(srv);
    const cookieCall = (body: unknown) =>
      fetch(`${srv.url}/v1/events/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: s.cookie },
        body: JSON.stringify(body),
      });
    const missing = await cookieCall({ events: [{ name: 'x', external_customer_id: 'e' }] });
    expect(missing.status).toBe(422);
    expect((await missing.json()).detail[0].loc).toEqual(['body', 'events', 0, 'organization_id']);
    const ok = await cookieCall({ events: [{ name: 'x', external_customer_id: 'e', organization_id: s.organization.id }] });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ inserted: 1 });
  });

  it('refuses missing credentials (401) and tokens without the scope (403)', async () => {
    const anon = await call(srv, null, 'POST', '/v1/events/ingest', { events: [{ name: 'x', external_customer_id: 'e' }] });
    expect(anon.status).toBe(401);
    expect(anon.body.error).toBe('Unauthorized');
    const readOnly = await usageSeller(srv, ['events:read']);
    const denied = await call(srv, readOnly.token, 'POST', '/v1/events/ingest', { events: [{ name: 'x', external_customer_id: 'e' }] });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toBe('NotPermitted');
    const writeOnly = await usageSeller(srv, ['events:write']);
    expect((await call(srv, writeOnly.token, 'GET', '/v1/events/')).status).toBe(403);
  });
});

describe('event list and read', () => {
  it('filters by time, customer (id or external id), source, name and metadata; sorts and pages', async () => {
    const s = await usageSeller(srv);
    const carol = await createCustomer(srv, s.organization.id, { externalId: 'carol' });
    const day = (n: number) => new Date(Date.UTC(2025, 0, n, 12));
    await s.polar.events.ingest({
      events: [
        { name: 'a', customerId: carol.id, timestamp: day(1), metadata: { plan: 'pro', seats: 3 } },
        { name: 'b', externalCustomerId: 'carol', timestamp: day(2), metadata: { plan: 'free' } },
        { name: 'a', externalCustomerId: 'dave', timestamp: day(3), metadata: { plan: 'pro', flag: true } },
        { name: 'c', externalCustomerId: 'dave', timestamp: day(4) },
      ],
    });
    const names = async (req: Parameters<typeof s.polar.events.list>[0]) =>
      (await s.polar.events.list(req)).result.items.map((e) => e.name);

    expect(await names({ startTimestamp: day(2), endTimestamp: day(3) })).toEqual(['a', 'b']);
    expect(await names({ source: 'user', sorting: ['timestamp'] })).toEqual(['a', 'b', 'a', 'c']);
    // A customer filter also matches events sent with the customer's external id, and vice versa.
    expect(await names({ customerId: carol.id, sorting: ['timestamp'] })).toEqual(['a', 'b']);
    expect(await names({ externalCustomerId: 'carol', sorting: ['timestamp'] })).toEqual(['a', 'b']);
    expect(await names({ externalCustomerId: ['dave'], sorting: ['timestamp'] })).toEqual(['a', 'c']);
    expect(await names({ source: 'system' })).toEqual([]);
    // System events (recorded by other modules, e.g. meter credits) carry source "system".
    await insertEvents(srv.deps.orm.em.fork(), [
      { organizationId: s.organization.id, name: 'meter_credited', timestamp: day(5), customerId: carol.id, metadata: { units: 10 } },
    ]);
    const system = (await s.polar.events.list({ source: 'system' })).result.items;
    expect(system.map((e) => [e.name, e.source, e.customerId, e.metadata])).toEqual([['meter_credited', 'system', carol.id, { units: 10 }]]);
    expect(await names({ source: 'user', sorting: ['timestamp'] })).toEqual(['a', 'b', 'a', 'c']);
    expect(await names({ metadata: { plan: 'pro' }, sorting: ['timestamp'] })).toEqual(['a', 'a']);
    expect(await names({ metadata: { plan: ['pro', 'free'], seats: 3 } })).toEqual(['a']);
    expect(await names({ metadata: { flag: true } })).toEqual(['a']);
    const raw = await call(srv, s.token, 'GET', '/v1/events/?name=c&name=b&sorting=timestamp');
    expect(raw.body.items.map((e: { name: string }) => e.name)).toEqual(['b', 'c']);

    const page2 = await s.polar.events.list({ limit: 3, page: 2, sorting: ['timestamp'] });
    expect(page2.result.items.map((e) => e.name)).toEqual(['c', 'meter_credited']);
    expect(page2.result.pagination).toEqual({ totalCount: 5, maxPage: 2 });
    expect((await call(srv, s.token, 'GET', '/v1/events/?sorting=name')).status).toBe(422);
  });

  it("keeps organizations apart: another organization's events are 404 and absent from lists", async () => {
    const s = await usageSeller(srv);
    const other = await usageSeller(srv);
    await s.polar.events.ingest({ events: [{ name: 'secret', externalCustomerId: 'x' }] });
    const [mine] = (await s.polar.events.list({})).result.items;
    const got = await call(srv, other.token, 'GET', `/v1/events/${mine!.id}`);
    expect(got.status).toBe(404);
    expect(got.body).toEqual({ error: 'ResourceNotFound', detail: 'Event not found' });
    expect((await other.polar.events.list({})).result.items).toEqual([]);
    expect((await other.polar.events.list({ organizationId: s.organization.id })).result.items).toEqual([]);
    expect((await call(srv, s.token, 'GET', '/v1/events/not-a-uuid')).status).toBe(422);
  });
});
