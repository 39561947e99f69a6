/**
 * GET /v1/operations/temporal is scoped to the caller: a seller's session or organization token gets
 * the links of its own organization only (the visibility-query template filters on its
 * OrganizationId); naming another organization is a 404; a user of no organization gets a 404; no
 * credentials is a 401; a token without organizations:read is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, startTestServer, type TestServer } from '../harness.ts';
import { call } from './helpers.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof seller>>;
let b: Awaited<ReturnType<typeof seller>>;

beforeAll(async () => {
  srv = await startTestServer();
  a = await seller(srv.url, ['organizations:read']);
  b = await seller(srv.url, ['organizations:read']);
});
afterAll(async () => {
  await srv?.close();
});

const PATH = '/v1/operations/temporal';
const asUser = (cookie: string, query = '') => fetch(`${srv.url}${PATH}${query}`, { headers: { cookie } });
/** The organization a query link filters on, read back from the template as the Temporal UI would. */
const linkedOrganization = (template: string) => {
  const query = new URL(template.replace('{query}', encodeURIComponent('WorkflowType = "x"'))).searchParams.get('query');
  return query;
};

describe('GET /v1/operations/temporal', () => {
  it("gives a seller's token the links of its own organization only", async () => {
    const res = await call(srv.url, a.token, 'GET', PATH);
    expect(res.status).toBe(200);
    expect(res.body.organization_id).toBe(a.organization.id);
    expect(linkedOrganization(res.body.query_url_template)).toBe(`OrganizationId = "${a.organization.id}" AND (WorkflowType = "x")`);
    const other = await call(srv.url, a.token, 'GET', `${PATH}?organization_id=${b.organization.id}`);
    expect([other.status, other.body.error]).toEqual([404, 'ResourceNotFound']);
  });

  it("gives a signed-in user their organization's links, and a 404 for another organization", async () => {
    const own = await asUser(a.cookie, `?organization_id=${a.organization.id}`);
    expect(own.status).toBe(200);
    const body = await own.json();
    expect(linkedOrganization(body.query_url_template)).toBe(`OrganizationId = "${a.organization.id}" AND (WorkflowType = "x")`);
    const implicit = await asUser(b.cookie);
    expect(implicit.status).toBe(200);
    expect(linkedOrganization((await implicit.json()).query_url_template)).toBe(`OrganizationId = "${b.organization.id}" AND (WorkflowType = "x")`);
    const foreign = await asUser(a.cookie, `?organization_id=${b.organization.id}`);
    expect([foreign.status, (await foreign.json()).error]).toEqual([404, 'ResourceNotFound']);
  });

  it('answers 401 without credentials and refuses a token without organizations:read', async () => {
    const anonymous = await call(srv.url, null, 'GET', PATH);
    expect(anonymous.status).toBe(401);
    const narrow = await seller(srv.url, ['products:read']);
    const refused = await call(srv.url, narrow.token, 'GET', PATH);
    expect(refused.status).toBe(403);
    const bogus = await call(srv.url, 'polar_oat_not-a-token', 'GET', PATH);
    expect(bogus.status).toBe(401);
  });

  it('asks a user of several organizations which one, and answers 404 to a user of none', async () => {
    const second = await fetch(`${srv.url}/v1/organizations/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: a.cookie },
      body: JSON.stringify({ name: 'Second Organization', slug: `second-${Date.now()}` }),
    });
    expect(second.status).toBe(201);
    const ambiguous = await asUser(a.cookie);
    expect(ambiguous.status).toBe(422);
    expect((await ambiguous.json()).detail[0].loc).toEqual(['query', 'organization_id']);

    const signUp = await fetch(`${srv.url}/api/auth/sign-up/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `lonely-${Date.now()}@example.com`, password: 'correct horse battery', name: 'No Org' }),
    });
    expect(signUp.status).toBe(200);
    const cookie = signUp.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const none = await asUser(cookie);
    expect(none.status).toBe(404);
  });
});
