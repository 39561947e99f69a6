/** Health, the generated OpenAPI document, and the object store through the `minio` client. */
import { randomUUID, createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json, startTestServer, type TestServer } from '../harness.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

describe('health', () => {
  it('reports database and Temporal connectivity', async () => {
    const res = await fetch(`${srv.url}/healthz`);
    expect(res.status).toBe(200);
    const body = await json(res);
    expect(body).toMatchObject({ status: 'ok', database: { ok: true }, temporal: { ok: true } });
  });
});

describe('OpenAPI', () => {
  it('serves a 3.1 document generated from the route schemas, and a docs page', async () => {
    const doc = await json(await fetch(`${srv.url}/openapi.json`));
    expect(doc.openapi).toBe('3.1.0');
    const create = doc.paths['/v1/products/'].post;
    expect(create.responses['201']).toBeDefined();
    const body = create.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(expect.arrayContaining(['name', 'prices']));
    expect(body.properties.recurring_interval).toBeDefined();
    const get = doc.paths['/v1/products/{id}'].get;
    expect(get.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'id', in: 'path', required: true })]));
    const list = doc.paths['/v1/products/'].get;
    expect(list.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['page', 'limit', 'sorting']));
    const docs = await fetch(`${srv.url}/docs`);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
    expect(await docs.text()).toContain('/openapi.json');
  });
});

describe('object store', () => {
  it('uploads and downloads an object, and serves it through a presigned URL', async () => {
    const { storage } = srv.deps;
    const key = `tests/${randomUUID()}.txt`;
    const content = Buffer.from(`hello ${randomUUID()}`);
    const { etag } = await storage.put(storage.bucket, key, content, 'text/plain');
    expect(etag).toBe(createHash('md5').update(content).digest('hex'));
    expect((await storage.get(storage.bucket, key)).equals(content)).toBe(true);

    const url = await storage.presignedGet(storage.bucket, key, 60);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);

    // The private bucket refuses anonymous reads; the public one allows them.
    const anon = await fetch(url.split('?')[0]!);
    expect(anon.status).toBe(403);
    await storage.put(storage.publicBucket, key, content, 'text/plain');
    const pub = await fetch(storage.publicUrl(key));
    expect(pub.status).toBe(200);
    expect(await pub.text()).toBe(content.toString());

    await storage.remove(storage.bucket, key);
    await expect(storage.get(storage.bucket, key)).rejects.toThrow();
  });
});
