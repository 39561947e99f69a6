/**
 * The built portal/checkout bundle as the API serves it: JavaScript and the page compressed (gzip or
 * brotli, as the browser asks), content-hashed assets cached as immutable, the page itself revalidated.
 * Needs `npm run build -w portal-ui`.
 */
import { readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import zlib from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
const dist = path.resolve(import.meta.dirname, '../../portal-ui/dist/assets');
const entry = readdirSync(dist).find((f) => /^index-.+\.js$/.test(f))!;

/** A raw GET (fetch would decompress and hide the encoding). */
function get(url: string, encoding: string | null): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: encoding ? { 'accept-encoding': encoding } : {} }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      })
      .on('error', reject);
  });
}

beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { SERVE_UI: 'true' } });
});
afterAll(async () => {
  await srv?.close();
});

describe('UI static assets', () => {
  it('serves the checkout JavaScript gzipped or brotli-compressed, cached as immutable', async () => {
    const plain = await get(`${srv.url}/portal/assets/${entry}`, null);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gz = await get(`${srv.url}/portal/assets/${entry}`, 'gzip');
    expect(gz.status).toBe(200);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(zlib.gunzipSync(gz.body).equals(plain.body)).toBe(true);
    expect(gz.body.length).toBeLessThan(plain.body.length / 2);
    const br = await get(`${srv.url}/portal/assets/${entry}`, 'br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(zlib.brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
  });

  it('serves the checkout page (under 1 KB: sent as is) without immutable caching', async () => {
    const page = await get(`${srv.url}/checkout/polar_c_unknown`, 'gzip');
    expect(page.status).toBe(200);
    expect(page.body.toString()).toContain(`/portal/assets/${entry}`);
    expect(page.headers['cache-control'] ?? '').not.toContain('immutable');
  });
});
