/** The /v1 error, pagination, sorting and scoping contract, through HTTP. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({
    worker: false,
    configure: (app) =>
      app.get('/v1/__boom', () => {
        throw new Error('secret internal detail');
      }),
  });
});
afterAll(async () => {
  await srv?.close();
});

const post = (url: string, token: string, body: unknown) =>
  fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe('errors', () => {
  it('answers unknown routes with 404 ResourceNotFound', async () => {
    const res = await fetch(`${srv.url}/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: 'ResourceNotFound', detail: 'Not found' });
  });

  it('answers missing and bad credentials with 401 and WWW-Authenticate', async () => {
    const none = await fetch(`${srv.url}/v1/products/`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect((await json(none)).error).toBe('Unauthorized');
    const bad = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: 'Bearer polar_oat_nope' } });
    expect(bad.status).toBe(401);
  });

  it('reports validation failures as 422 with loc, msg and type', async () => {
    const s = await seller(srv.url);
    const res = await post(`${srv.url}/v1/products/`, s.token, { prices: [{ amount_type: 'fixed', price_amount: 10.5 }] });
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.error).toBe('RequestValidationError');
    expect(body.detail).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ loc: ['body', 'name'], type: 'missing', msg: 'Field required' }),
        expect.objectContaining({ loc: ['body', 'prices', 0, 'price_amount'] }),
      ]),
    );
  });

  it('rejects malformed JSON with a clear 422', async () => {
    const s = await seller(srv.url);
    const res = await post(`${srv.url}/v1/products/`, s.token, '{"name": "x",');
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.detail[0]).toMatchObject({ type: 'json_invalid', loc: ['body'] });
    expect(body.detail[0].msg).toMatch(/JSON decode error/);
  });

  it('hides internal errors behind a 500 with a request id', async () => {
    const res = await fetch(`${srv.url}/v1/__boom`, { headers: { 'x-request-id': 'req-123' } });
    expect(res.status).toBe(500);
    const text = await res.text();
    expect(text).not.toContain('secret internal detail');
    expect(JSON.parse(text)).toMatchObject({ error: 'InternalServerError', request_id: 'req-123' });
    expect(res.headers.get('x-request-id')).toBe('req-123');
  });

  it('refuses a token without the route scope with 403 NotPermitted', async () => {
    const s = await seller(srv.url, ['products:read']);
    const res = await post(`${srv.url}/v1/products/`, s.token, { name: 'Nope', prices: [{ amount_type: 'free' }] });
    expect(res.status).toBe(403);
    expect((await json(res)).error).toBe('NotPermitted');
  });
});

describe('pagination and sorting', () => {
  it('pages, caps limit at 100, sorts by whitelisted keys and refuses others', async () => {
    const s = await seller(srv.url);
    for (const name of ['Charlie', 'Alpha', 'Bravo']) {
      expect((await post(`${srv.url}/v1/products/`, s.token, { name, prices: [{ amount_type: 'free' }] })).status).toBe(201);
    }
    const get = (q: string) => fetch(`${srv.url}/v1/products/?${q}`, { headers: { authorization: `Bearer ${s.token}` } });

    const page2 = await json(await get('limit=2&page=2&sorting=name'));
    expect(page2.items.map((p: { name: string }) => p.name)).toEqual(['Charlie']);
    expect(page2.pagination).toEqual({ total_count: 3, max_page: 2 });

    const desc = await json(await get('sorting=-name'));
    expect(desc.items.map((p: { name: string }) => p.name)).toEqual(['Charlie', 'Bravo', 'Alpha']);

    const capped = await json(await get('limit=1000'));
    expect(capped.pagination).toEqual({ total_count: 3, max_page: 1 });

    const empty = await json(await get('page=5'));
    expect(empty).toEqual({ items: [], pagination: { total_count: 3, max_page: 1 } });

    const bad = await get('sorting=price');
    expect(bad.status).toBe(422);
    expect((await json(bad)).detail[0].loc).toEqual(['query', 'sorting']);

    expect((await get('page=0')).status).toBe(422);
  });
});

describe('scoping', () => {
  it("answers another organization's product with 404 and never lists it", async () => {
    const a = await seller(srv.url);
    const b = await seller(srv.url);
    const created = await json(await post(`${srv.url}/v1/products/`, a.token, { name: 'Secret', prices: [{ amount_type: 'free' }] }));
    const res = await fetch(`${srv.url}/v1/products/${created.id}`, { headers: { authorization: `Bearer ${b.token}` } });
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ error: 'ResourceNotFound', detail: 'Product not found' });
    const list = await json(await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${b.token}` } }));
    expect(list.items).toEqual([]);
    // Naming the other organization explicitly with an organization token is refused.
    const cross = await post(`${srv.url}/v1/products/`, b.token, {
      name: 'Sneaky',
      organization_id: a.organization.id,
      prices: [{ amount_type: 'free' }],
    });
    expect(cross.status).toBe(422);
    expect((await json(cross)).detail[0].loc).toEqual(['body', 'organization_id']);
  });
});
