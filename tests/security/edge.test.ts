/**
 * Issue #23.3-5 as regression tests: public pages never carry private benefit data; hostile input
 * (deep JSON, huge values, NUL and lone surrogates, broken bodies) gets a bounded JSON error, never a
 * 500 or HTML; cookie-authenticated /v1 writes from foreign origins are refused; the HTML pages send
 * a Content-Security-Policy and friends, the checkout framable only by its embed_origin; the client
 * address comes from X-Forwarded-For only when a proxy is configured; another customer's grant is a 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Polar } from '@polar-sh/sdk';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { seller, startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { portalCustomer, portalSeller, insertGrant } from '../portal/helpers.ts';
import { call, createBenefit, email, openCheckout, productWith, securitySeller, type Seller } from './helpers.ts';

let srv: TestServer;
let s: Seller;
let pub: Polar;

const NOTE = 'secret-note-only-for-customers-7f3a';

beforeAll(async () => {
  srv = await startTestServer({ worker: false });
  s = await securitySeller(srv);
  pub = new Polar({ serverURL: srv.url });
}, 120_000);
afterAll(async () => {
  await srv?.close();
});

const BENEFIT_PUBLIC_KEYS = ['created_at', 'deletable', 'description', 'id', 'modified_at', 'organization_id', 'selectable', 'type'];

/** Raw request returning the status, content type and text. */
async function raw(path: string, init: RequestInit = {}) {
  const res = await fetch(`${srv.url}${path}`, init);
  return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text(), headers: res.headers };
}

const postJson = (path: string, body: string, token?: string) =>
  raw(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body,
  });

describe('public pages carry no benefit properties (#23.3)', () => {
  let productId: string;
  let fileIdInBenefit: string;

  beforeAll(async () => {
    const custom = await createBenefit(srv, s, { type: 'custom', description: 'Support', properties: { note: NOTE } });
    const file = await call(srv.url, s.token, 'POST', '/v1/files/', {
      name: 'book.pdf',
      mime_type: 'application/pdf',
      size: 10,
      service: 'downloadable',
      upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 10 }] },
    });
    expect(file.status).toBe(201);
    fileIdInBenefit = file.body.id;
    const files = await createBenefit(srv, s, { type: 'downloadables', description: 'Book', properties: { files: [fileIdInBenefit] } });
    productId = await productWith(srv, s, { benefits: [custom.id, files.id], prices: [{ amount_type: 'free' }] });
  });

  function expectNoLeak(text: string) {
    expect(text).not.toContain(NOTE);
    expect(text).not.toContain(fileIdInBenefit);
    expect(text).not.toContain('"properties"');
  }

  it('the public organization page', async () => {
    const page = await raw(`/v1/customer-portal/organizations/${s.organization.slug}`);
    expect(page.status).toBe(200);
    expectNoLeak(page.text);
    const body = JSON.parse(page.text);
    expect(Object.keys(body.products[0].benefits[0]).sort()).toEqual(BENEFIT_PUBLIC_KEYS);
    const parsed = await pub.customerPortal.organizations.get({ slug: s.organization.slug });
    expect(parsed.products[0]!.benefits.map((b) => b.type).sort()).toEqual(['custom', 'downloadables']);
  });

  it('the public checkout, by client secret', async () => {
    const checkout = await openCheckout(srv, s, productId);
    const page = await raw(`/v1/checkouts/client/${checkout.client_secret}`);
    expect(page.status).toBe(200);
    expectNoLeak(page.text);
    expect(Object.keys(JSON.parse(page.text).product.benefits[0]).sort()).toEqual(BENEFIT_PUBLIC_KEYS);
    const parsed = await pub.checkouts.clientGet({ clientSecret: checkout.client_secret });
    expect(parsed.product.benefits).toHaveLength(2);
  });

  it('the confirmation answer', async () => {
    const checkout = await openCheckout(srv, s, productId);
    const confirmed = await raw(`/v1/checkouts/client/${checkout.client_secret}/confirm`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ customer_email: email('free'), customer_name: 'Fay Free', customer_billing_address: { country: 'US' } }),
    });
    expect(confirmed.status).toBe(200);
    expectNoLeak(confirmed.text);
    expect(Object.keys(JSON.parse(confirmed.text).products[0].benefits[0]).sort()).toEqual(BENEFIT_PUBLIC_KEYS);
  });

  it('the seller still reads the properties', async () => {
    const product = await call(srv.url, s.token, 'GET', `/v1/products/${productId}`);
    expect(JSON.stringify(product.body)).toContain(NOTE);
  });
});

describe('hostile input gets a bounded JSON error (#23.4)', () => {
  const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

  it('a 50,000-deep JSON value is refused at parse time with a short 422', async () => {
    const res = await postJson('/v1/products/', `{"name": "x", "metadata": ${deep(50_000)}}`, s.token);
    expect(res.status).toBe(422);
    expect(res.type).toContain('application/json');
    expect(res.text.length).toBeLessThan(1000);
    const body = JSON.parse(res.text);
    expect(body.error).toBe('RequestValidationError');
    expect(body.detail[0]).toMatchObject({ type: 'json_too_deep', loc: ['body'] });
  });

  it('also on a public route and at 65 levels, while 64 levels parse', async () => {
    const refused = await postJson('/v1/checkouts/client/polar_c_unknown/confirm', `{"customer_email": ${deep(65)}}`);
    expect(refused.status).toBe(422);
    expect(JSON.parse(refused.text).detail[0].type).toBe('json_too_deep');
    const parsed = await postJson('/v1/products/', `{"name": "x", "metadata": {"k": ${deep(62)}}}`, s.token);
    expect(parsed.status).toBe(422);
    expect(JSON.parse(parsed.text).detail[0].type).not.toBe('json_too_deep');
    expect(parsed.text.length).toBeLessThan(2000);
  });

  it('never echoes a huge value back', async () => {
    const res = await postJson('/v1/products/', JSON.stringify({ name: 123, description: 'd'.repeat(600_000), prices: 'p'.repeat(300_000) }), s.token);
    expect(res.status).toBe(422);
    expect(res.text.length).toBeLessThan(3000);
    const issue = JSON.parse(res.text).detail.find((d: { loc: string[] }) => d.loc[1] === 'prices');
    expect(issue.input.length).toBeLessThanOrEqual(201);
  });

  it.each([
    ['a NUL in a product name', { name: 'Bad\u0000name', prices: [{ amount_type: 'free' }] }, ['body', 'name']],
    ['a lone surrogate in a product name', { name: 'Bad\ud800name', prices: [{ amount_type: 'free' }] }, ['body', 'name']],
    ['a NUL in a metadata key', { name: 'Ok', prices: [{ amount_type: 'free' }], metadata: { 'k\u0000': 'v' } }, ['body', 'metadata', 'k\ufffd']],
  ])('%s is a 422 on its field', async (_what, body, loc) => {
    const res = await call(srv.url, s.token, 'POST', '/v1/products/', body);
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('RequestValidationError');
    expect(res.body.detail[0]).toMatchObject({ type: 'string_unstorable', loc });
  });

  it('a lone surrogate in a customer name is a 422, and nothing is stored', async () => {
    const address = uniqueEmail('ann');
    const res = await call(srv.url, s.token, 'POST', '/v1/customers/', { email: address, name: 'Ann\udfffe' });
    expect(res.status).toBe(422);
    expect(res.body.detail[0].loc).toEqual(['body', 'name']);
    const list = await call(srv.url, s.token, 'GET', '/v1/customers/?limit=100');
    expect(list.body.items.map((c: { email: string }) => c.email)).not.toContain(address);
  });

  it('a NUL in a sign-up name is the auth service’s 400 validation error', async () => {
    const res = await postJson('/api/auth/sign-up/email', JSON.stringify({ email: uniqueEmail('u'), password: 'correct horse battery', name: 'Eve\u0000' }));
    expect(res.status).toBe(400);
    expect(JSON.parse(res.text).code).toBe('VALIDATION_ERROR');
  });

  it.each([
    ['malformed JSON', () => postJson('/v1/products/', '{"name": ', s.token), 422, 'RequestValidationError'],
    ['an unsupported charset', () => raw('/v1/products/', { method: 'POST', headers: { 'content-type': 'application/json; charset=klingon', authorization: `Bearer ${s.token}` }, body: '{}' }), 415, 'UnsupportedMediaType'],
    ['an unknown route', () => raw('/v1/no-such-thing/'), 404, 'ResourceNotFound'],
    ['an unknown page', () => raw('/definitely/not/here'), 404, 'ResourceNotFound'],
    ['a malformed percent-encoding in a path parameter', () => raw('/v1/products/%E0%A4%A', { headers: { authorization: `Bearer ${s.token}` } }), 400, 'BadRequest'],
  ])('%s answers JSON, never HTML or a stack trace', async (_what, send, status, error) => {
    const res = await send();
    expect(res.status).toBe(status);
    expect(res.type).toContain('application/json');
    expect(JSON.parse(res.text).error).toBe(error);
    expect(res.text).not.toMatch(/<html|<pre|node_modules|\.ts:\d+|at [A-Za-z]+ \(/i);
  });
});

describe('cookie-authenticated /v1 writes need a trusted origin (#23.5)', () => {
  let cookieSeller: Awaited<ReturnType<typeof seller>>;
  beforeAll(async () => {
    cookieSeller = await seller(srv.url, ['products:read', 'products:write']);
  });

  const createProduct = (headers: Record<string, string>) =>
    raw('/v1/products/', {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ name: 'Cookie product', prices: [{ amount_type: 'free' }], organization_id: cookieSeller.organization.id }),
    });

  it('refuses a foreign Origin, and a cross-site request without one', async () => {
    const foreign = await createProduct({ cookie: cookieSeller.cookie, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.text).error).toBe('NotPermitted');
    const opaque = await createProduct({ cookie: cookieSeller.cookie, origin: 'null' });
    expect(opaque.status).toBe(403);
    const crossSite = await createProduct({ cookie: cookieSeller.cookie, 'sec-fetch-site': 'cross-site' });
    expect(crossSite.status).toBe(403);
    const list = await raw(`/v1/products/?organization_id=${cookieSeller.organization.id}`, { headers: { cookie: cookieSeller.cookie } });
    expect(JSON.parse(list.text).items).toEqual([]);
  });

  it('accepts its own origin, and bearer tokens whatever the Origin', async () => {
    expect((await createProduct({ cookie: cookieSeller.cookie, origin: new URL(srv.url).origin })).status).toBe(201);
    expect((await createProduct({ authorization: `Bearer ${cookieSeller.token}`, origin: 'https://evil.example' })).status).toBe(201);
  });

  it('reads are not affected', async () => {
    const list = await raw(`/v1/products/?organization_id=${cookieSeller.organization.id}`, {
      headers: { cookie: cookieSeller.cookie, origin: 'https://evil.example' },
    });
    expect(list.status).toBe(200);
  });
});

describe('HTML pages send security headers (#23.5)', () => {
  it.each(['/dashboard/', '/portal/', '/docs'])('%s: CSP, no framing, referrer policy, nosniff', async (path) => {
    const res = await raw(path);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin');
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('a checkout may be framed by its embed_origin only', async () => {
    const productId = await productWith(srv, s, { benefits: [], prices: [{ amount_type: 'free' }] });
    const embedded = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: productId, embed_origin: 'https://shop.example.com' });
    expect(embedded.status).toBe(201);
    const page = await raw(`/checkout/${embedded.body.client_secret}`);
    expect(page.headers.get('content-security-policy')).toMatch(/frame-ancestors https:\/\/shop\.example\.com(;|$)/);
    expect(page.headers.get('x-frame-options')).toBeNull();
    const plain = await openCheckout(srv, s, productId);
    const other = await raw(`/checkout/${plain.client_secret}`);
    expect(other.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(other.headers.get('x-frame-options')).toBe('DENY');
  });

  it('the docs page runs no inline script', async () => {
    const page = await raw('/docs');
    expect(page.text).not.toMatch(/<script>/);
    const script = await raw('/docs.js');
    expect(script.status).toBe(200);
    expect(script.type).toContain('javascript');
  });
});

describe('another customer’s grant is not found, to read and to update (#23.5)', () => {
  it('answers 404 like an unknown id', async () => {
    const ps = await portalSeller(srv);
    const benefit = await ps.call('POST', '/v1/benefits/', { type: 'custom', description: 'Perk', properties: { note: 'n' } });
    const [mine, theirs] = await Promise.all([portalCustomer(srv, ps), portalCustomer(srv, ps)]);
    const grant = await insertGrant(srv, theirs.id, benefit.body.id);
    await expect(mine.polar.customerPortal.benefitGrants.get(mine.security, { id: grant.id })).rejects.toBeInstanceOf(ResourceNotFound);
    const update = await call(srv.url, mine.token, 'PATCH', `/v1/customer-portal/benefit-grants/${grant.id}`, { benefit_type: 'custom' });
    const unknown = await call(srv.url, mine.token, 'PATCH', '/v1/customer-portal/benefit-grants/00000000-0000-4000-8000-000000000000', {
      benefit_type: 'custom',
    });
    expect(update.status).toBe(404);
    expect(update.body).toEqual(unknown.body);
  });
});

describe('the client address comes from X-Forwarded-For only behind a configured proxy (#23.5)', () => {
  let direct: TestServer;
  beforeAll(async () => {
    direct = await startTestServer({ worker: false, env: { TRUST_PROXY: 'false', RATE_LIMIT_ENABLED: 'true' } });
  }, 120_000);
  afterAll(async () => {
    await direct?.close();
  });

  it('a client cannot escape the sign-in rate limit by naming other addresses', async () => {
    const who = uniqueEmail('nobody');
    // Sent at once, so all four fall in one 10-second window however slow password checks are.
    const statuses = await Promise.all(
      ['203.0.113.1', '203.0.113.2', '203.0.113.3', '203.0.113.4'].map(async (ip) => {
        const res = await fetch(`${direct.url}/api/auth/sign-in/email`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': ip },
          body: JSON.stringify({ email: who, password: 'wrong password here' }),
        });
        return res.status;
      }),
    );
    expect(statuses.sort()).toEqual([401, 401, 401, 429]);
  });
});
