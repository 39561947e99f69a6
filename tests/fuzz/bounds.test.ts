/**
 * Issue #20: the inputs the fuzzer found making a 500 are each a 422 in the validation shape, at the
 * field's location (64-bit integers, offsets past int4, dates PostgreSQL or JavaScript cannot read,
 * strings longer than their column).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../api/src/kit/scopes.ts';

describe('inputs out of range are 422, never 500', () => {
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seller>>;
  const call = async (method: string, path: string, body?: unknown, token: string | null = s.token) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await json(res) };
  };
  const expect422 = (r: { status: number; body: any }, loc: (string | number)[]) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toBe('RequestValidationError');
    expect(r.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
  };

  beforeAll(async () => {
    server = await startTestServer({ worker: false });
    s = await seller(server.url, [...ORGANIZATION_TOKEN_SCOPES]);
  });
  afterAll(() => server?.close());

  it('a page whose offset would overflow', async () => {
    expect422(await call('GET', '/v1/meters/?page=2199023255552'), ['query', 'page']);
    const meter = await call('POST', '/v1/meters/', {
      name: 'Meter',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'count' },
    });
    expect(meter.status).toBe(201);
    expect422(await call('GET', `/v1/meters/${meter.body.id}/events?page=9007199254740990`), ['query', 'page']);
    expect((await call('GET', '/v1/meters/?page=1000000')).status).toBe(200);
  });

  it('dates before 1900 and offsets past ±23:59', async () => {
    expect422(
      await call('GET', '/v1/metrics/?start_date=0020-02-29&end_date=0020-02-29&interval=hour'),
      ['query', 'start_date'],
    );
    expect422(await call('GET', '/v1/events/?start_timestamp=2020-01-01T00:00:00%2B99:99'), ['query', 'start_timestamp']);
    expect((await call('GET', '/v1/events/?start_timestamp=2020-01-01T00:00:00%2B05:30')).status).toBe(200);
  });

  it('amounts beyond an int4 column', async () => {
    const org = s.organization.id;
    expect422(await call('PATCH', `/v1/organizations/${org}`, { per_user_monthly_spending_limit: 9007199254740990 }), [
      'body',
      'per_user_monthly_spending_limit',
    ]);
    expect422(await call('PATCH', `/v1/organizations/${org}`, { total_monthly_spending_limit: 2147483648 }), [
      'body',
      'total_monthly_spending_limit',
    ]);
    expect((await call('PATCH', `/v1/organizations/${org}`, { per_user_monthly_spending_limit: 2147483647 })).status).toBe(200);
  });

  it('an empty webhook URL and an email longer than its column', async () => {
    expect422(await call('POST', '/v1/webhooks/endpoints', { url: '', format: 'raw', events: ['order.created'] }), ['body', 'url']);
    const long = `a@${'b'.repeat(250)}.com`;
    expect422(await call('POST', '/v1/customers/', { email: long }), ['body', 'email']);
    // Unknown or not: 202, also for an address as long as the column allows.
    const max = `a@${'b'.repeat(248)}.com`;
    const req = await call('POST', '/v1/customer-portal/customer-session/request', { email: max, organization_id: s.organization.id }, null);
    expect(req.status).toBe(202);
  });
});
