/**
 * Organization tokens are answered from memory for a few seconds after a lookup (kit/principals.ts):
 * a token that was just used and is then narrowed or revoked must stop working at once in the
 * process that changed it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
});

const newProduct = (token: string) =>
  fetch(`${srv.url}/v1/products/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ name: 'Cached', prices: [{ amount_type: 'free' }] }),
  });
const listProducts = (token: string) => fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${token}` } });

describe('a token used a moment ago', () => {
  it('loses a scope as soon as it is narrowed, and all access as soon as it is revoked', async () => {
    const s = await seller(srv.url, ['products:read', 'products:write']);
    const tokens = await json(await fetch(`${srv.url}/v1/organization-access-tokens/`, { headers: { cookie: s.cookie } }));
    expect(tokens.items).toHaveLength(1);
    const id = tokens.items[0].id as string;

    expect((await newProduct(s.token)).status).toBe(201);
    expect((await listProducts(s.token)).status).toBe(200);

    const narrowed = await fetch(`${srv.url}/v1/organization-access-tokens/${id}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie: s.cookie },
      body: JSON.stringify({ scopes: ['products:read'] }),
    });
    expect(narrowed.status).toBe(200);
    const refused = await newProduct(s.token);
    expect(refused.status).toBe(403);
    expect((await json(refused)).detail).toBe('Missing scope: products:write');
    expect((await listProducts(s.token)).status).toBe(200);

    const revoked = await fetch(`${srv.url}/v1/organization-access-tokens/${id}`, { method: 'DELETE', headers: { cookie: s.cookie } });
    expect(revoked.status).toBe(204);
    expect((await listProducts(s.token)).status).toBe(401);
  });
});

describe('the bearer credential', () => {
  it('is taken only as `Bearer <token>` with one space, from the header or an access_token alone, never both', async () => {
    const s = await seller(srv.url, ['products:read']);
    const get = (authorization: string | null, query = '') =>
      fetch(`${srv.url}/v1/products/${query}`, { headers: authorization === null ? {} : { authorization } });
    expect((await get(`Bearer ${s.token}`)).status).toBe(200);
    expect((await get(`bearer ${s.token}`)).status).toBe(200);
    const malformed = await get(`Bearer  ${s.token}`);
    expect(malformed.status).toBe(401);
    expect((await json(malformed)).detail).toBe('Invalid or expired token');
    expect((await get(`Bearer\t${s.token}`)).status).toBe(401);
    expect((await get(`Bearer ${s.token} x`)).status).toBe(401);
    expect((await get(`Bearer ${s.token}`, `?access_token=${s.token}`)).status).toBe(401);
    expect((await get(`Bearer polar_oat_unknown`)).status).toBe(401);
    // A header that is not a bearer scheme of two parts still lets an access_token parameter stand alone.
    expect((await get(`Bearer\tx y`, `?access_token=${encodeURIComponent(s.token)}`)).status).toBe(200);
    expect((await get(null)).status).toBe(401);
  });
});
