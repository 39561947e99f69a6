/**
 * Issue #20: inputs the long Schemathesis run (bench/fuzz) found, each sent as it was found. A name one
 * character longer than its varchar(255) column was a 500 (portal profile, seller customer, checkout,
 * checkout-link prefill); it is a 422 at the field, and a name as long as the column is stored. The
 * OAuth2 client's `scope` pattern in the document refuses exactly what the server refuses. A created
 * file's answer (a file and its upload, an intersection) matches the document's schema for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { ORGANIZATION_TOKEN_SCOPES } from '../../api/src/kit/scopes.ts';

type Reply = { status: number; body: any; headers: Headers };

describe('inputs the long fuzz run found', () => {
  let server: TestServer;
  let s: Awaited<ReturnType<typeof seller>>;
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${s.token}` }): Promise<Reply> => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      redirect: 'manual',
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = res.headers.get('content-type')?.includes('json') ? await json(res) : await res.text();
    return { status: res.status, body: answer, headers: res.headers };
  };
  const expect422 = (r: Reply, loc: (string | number)[]) => {
    expect(r.status, JSON.stringify(r.body)).toBe(422);
    expect(r.body.error).toBe('RequestValidationError');
    expect(r.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
  };
  const zeros = (n: number) => '0'.repeat(n);

  beforeAll(async () => {
    server = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
    s = await seller(server.url, [...ORGANIZATION_TOKEN_SCOPES]);
  });
  afterAll(() => server?.close());

  it('a customer changing their name in the portal to 256 characters', async () => {
    const customer = await call('POST', '/v1/customers/', { email: uniqueEmail('portal'), name: 'Carla' });
    expect(customer.status).toBe(201);
    const session = await call('POST', '/v1/customer-sessions/', { customer_id: customer.body.id });
    expect(session.status).toBe(201);
    const portal = { authorization: `Bearer ${session.body.token}` };
    // The request as found: billing address in Andorra, an empty tax id, a 256-character name.
    const found = {
      email: '0@0.AA',
      name: zeros(256),
      billing_address: { line1: null, line2: null, postal_code: null, city: null, state: null, country: 'AD' },
      tax_id: '',
    };
    expect422(await call('PATCH', '/v1/customer-portal/customers/me', found, portal), ['body', 'name']);
    const ok = await call('PATCH', '/v1/customer-portal/customers/me', { name: zeros(255) }, portal);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.name).toBe(zeros(255));
  });

  it('a seller naming a customer with 256 characters', async () => {
    expect422(await call('POST', '/v1/customers/', { email: uniqueEmail('long'), name: zeros(256) }), ['body', 'name']);
    const created = await call('POST', '/v1/customers/', { email: uniqueEmail('long'), name: zeros(255) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect422(await call('PATCH', `/v1/customers/${created.body.id}`, { name: zeros(256) }), ['body', 'name']);
    const read = await call('GET', `/v1/customers/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body.name).toBe(zeros(255));
  });

  it('a checkout and a checkout-link visit with a 256-character customer name', async () => {
    const product = await call('POST', '/v1/products/', {
      name: 'Lamp',
      prices: [{ amount_type: 'fixed', price_amount: 1500, price_currency: 'usd' }],
    });
    expect(product.status, JSON.stringify(product.body)).toBe(201);
    expect422(await call('POST', '/v1/checkouts/', { product_id: product.body.id, customer_name: zeros(256) }), ['body', 'customer_name']);
    const checkout = await call('POST', '/v1/checkouts/', { product_id: product.body.id, customer_name: zeros(255) });
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    expect(checkout.body.customer_name).toBe(zeros(255));
    expect422(
      await call('PATCH', `/v1/checkouts/client/${checkout.body.client_secret}`, { customer_name: zeros(256) }, {}),
      ['body', 'customer_name'],
    );

    const link = await call('POST', '/v1/checkout-links/', { product_id: product.body.id });
    expect(link.status, JSON.stringify(link.body)).toBe(201);
    const visit = (name: string) =>
      call('GET', `/v1/checkout-links/${link.body.client_secret}/redirect?customer_name=${name}`, undefined, {});
    expect422(await visit(zeros(256)), ['query', 'customer_name']);
    const redirected = await visit(zeros(255));
    expect(redirected.status).toBe(302);
    const secret = new URL(redirected.headers.get('location')!).pathname.split('/').pop();
    const started = await call('GET', `/v1/checkouts/client/${secret}`, undefined, {});
    expect(started.status, JSON.stringify(started.body)).toBe(200);
    expect(started.body.customer_name).toBe(zeros(255));
  });

  it("the document's scope pattern for OAuth2 clients refuses what the server refuses", async () => {
    const doc = await call('GET', '/openapi.json', undefined, {});
    expect(doc.status).toBe(200);
    const pattern = new RegExp(doc.body.paths['/v1/oauth2/register'].post.requestBody.content['application/json'].schema.properties.scope.pattern);
    const client = (scope: string) =>
      call('POST', '/v1/oauth2/register', { redirect_uris: ['https://app.example.com/cb'], client_name: 'App', scope }, { cookie: s.cookie });
    for (const scope of ['openid profile', ' openid  products:read ', '']) {
      expect(pattern.test(scope), scope).toBe(true);
      const r = await client(scope);
      expect(r.status, `${scope}: ${JSON.stringify(r.body)}`).toBe(200);
    }
    // As found: a run of zeros; then two known scopes without their space, and an unknown one.
    for (const scope of [zeros(90), 'openidprofile', 'openid web_default', 'openid\tprofile']) {
      expect(pattern.test(scope), scope).toBe(false);
      expect422(await client(scope), ['body', 'scope']);
    }
  });

  it("a created file's answer matches the document's schema for it", async () => {
    const created = await call('POST', '/v1/files/', {
      name: 'a.txt',
      mime_type: 'text/plain',
      size: 1,
      service: 'downloadable',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 1 }] },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.name).toBe('a.txt');
    expect(created.body.upload.parts).toHaveLength(1);
    const doc = await call('GET', '/openapi.json', undefined, {});
    const schema = doc.body.paths['/v1/files/'].post.responses['201'].content['application/json'].schema;
    // allOf: the answer must match each member; a member closed to other keys (additionalProperties:
    // false, in itself or in each of its alternatives) refused every key of the other member.
    const members = schema.allOf as Record<string, any>[];
    expect(members.length).toBeGreaterThan(1);
    const refused = (m: Record<string, any>): string[] => {
      if (m.anyOf) return (m.anyOf as Record<string, any>[]).map(refused).reduce((a, b) => (a.length <= b.length ? a : b));
      return m.additionalProperties === false ? Object.keys(created.body).filter((k) => !(k in (m.properties ?? {}))) : [];
    };
    expect(members.map(refused)).toEqual(members.map(() => []));
  });
});
