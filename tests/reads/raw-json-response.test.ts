/**
 * Reads whose body PostgreSQL builds are sent as that text (kit/read-sql.ts `sendRawJson`), not
 * through `res.send`: the client must still get the JSON content type, a Content-Length that counts
 * bytes (not characters), and for HEAD the same headers without a body.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seller, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(async () => {
  await srv?.close();
});

describe('a list read built by PostgreSQL', () => {
  it('answers JSON with its length in bytes, and HEAD the same headers without a body', async () => {
    const s = await seller(srv.url, ['products:read', 'products:write']);
    const name = 'Café ☕ 日本 "quoted" \\ plan';
    const created = await fetch(`${srv.url}/v1/products/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${s.token}` },
      body: JSON.stringify({ name, description: 'Ünïcödé '.repeat(200), prices: [{ amount_type: 'free' }] }),
    });
    expect(created.status).toBe(201);
    const id = ((await created.json()) as { id: string }).id;

    const get = await fetch(`${srv.url}/v1/products/`, { headers: { authorization: `Bearer ${s.token}` } });
    expect(get.status).toBe(200);
    expect(get.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const bytes = Buffer.from(await get.arrayBuffer());
    // Several non-ASCII characters: a length in characters would be shorter than the body.
    expect(bytes.byteLength).toBeGreaterThan(bytes.toString('utf8').length);
    expect(Number(get.headers.get('content-length'))).toBe(bytes.byteLength);
    const body = JSON.parse(bytes.toString('utf8')) as { items: { id: string; name: string }[]; pagination: { total_count: number } };
    expect(body.items.map((p) => [p.id, p.name])).toEqual([[id, name]]);
    expect(body.pagination.total_count).toBe(1);

    const head = await fetch(`${srv.url}/v1/products/`, { method: 'HEAD', headers: { authorization: `Bearer ${s.token}` } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(Number(head.headers.get('content-length'))).toBe(bytes.byteLength);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });
});
