/**
 * /v1/files: real multipart uploads to the object store through the presigned part URLs the API
 * signs, completion with the SHA-256 check, download through the presigned URL, public media,
 * rename, delete, validation and tenant isolation. SDK for the contract, raw HTTP for error bodies.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { FileUpload } from '@polar-sh/sdk/models/components/fileupload.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, usageSeller } from './events-helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
});

const MiB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('base64');

/** Splits into 5 MiB parts (the last one shorter), as a browser client would. */
function partsOf(data: Buffer, partSize = 5 * MiB) {
  const parts = [];
  for (let start = 0, n = 1; start < data.length; start += partSize, n++) {
    const end = Math.min(start + partSize, data.length);
    parts.push({ number: n, chunkStart: start, chunkEnd: end, checksumSha256Base64: sha256(data.subarray(start, end)) });
  }
  return parts;
}

/** PUTs every part to its presigned URL, as the client does; returns the completion parts. */
async function putParts(upload: FileUpload['upload'], data: Buffer) {
  const done = [];
  for (const part of upload.parts) {
    const res = await fetch(part.url, { method: 'PUT', body: new Uint8Array(data.subarray(part.chunkStart, part.chunkEnd)), headers: part.headers });
    expect(res.status, await res.clone().text()).toBe(200);
    const etag = res.headers.get('etag');
    expect(etag).toBeTruthy();
    done.push({ number: part.number, checksumEtag: etag!, checksumSha256Base64: part.checksumSha256Base64 ?? null });
  }
  return done;
}

async function objectExists(bucket: string, key: string): Promise<boolean> {
  try {
    await srv.deps.storage.client.statObject(bucket, key);
    return true;
  } catch {
    return false;
  }
}

describe('downloadable files', () => {
  it('uploads in several parts straight to the store, verifies the SHA-256 and serves a presigned download', async () => {
    const s = await usageSeller(srv);
    const data = randomBytes(5 * MiB + 123_457);
    const created = await s.polar.files.create({
      name: 'Report 2025 (final).bin',
      mimeType: 'application/octet-stream',
      size: data.length,
      checksumSha256Base64: sha256(data),
      service: 'downloadable',
      version: '1.0',
      upload: { parts: partsOf(data) },
    });
    expect(created).toMatchObject({
      organizationId: s.organization.id,
      name: 'Report 2025 (final).bin',
      mimeType: 'application/octet-stream',
      size: data.length,
      sizeReadable: '5.1 MB',
      service: 'downloadable',
      version: '1.0',
      isUploaded: false,
      checksumSha256Base64: sha256(data),
      checksumSha256Hex: Buffer.from(sha256(data), 'base64').toString('hex'),
      checksumEtag: null,
      lastModifiedAt: null,
    });
    expect(created.path).toBe(`${s.organization.id}/${created.id}/Report 2025 (final).bin`);
    expect(created.upload.path).toBe(created.path);
    expect(created.upload.parts).toHaveLength(2);
    expect(created.upload.parts[0]).toMatchObject({ number: 1, chunkStart: 0, chunkEnd: 5 * MiB });
    expect(created.upload.parts[0]!.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(created.upload.parts[1]!.url).toContain('partNumber=2');

    const parts = await putParts(created.upload, data);
    const uploaded = await s.polar.files.uploaded({
      id: created.id,
      fileUploadCompleted: { id: created.upload.id, path: created.upload.path, parts },
    });
    expect(uploaded).toMatchObject({ id: created.id, service: 'downloadable', isUploaded: true, size: data.length });
    expect(uploaded.checksumEtag).toBeTruthy();
    expect(uploaded.lastModifiedAt).toBeInstanceOf(Date);

    // The list parses as DownloadableFileRead; the raw read model carries a presigned download.
    const list = await s.polar.files.list({ organizationId: s.organization.id });
    expect(list.result.items.map((f) => [f.id, f.service, f.isUploaded])).toEqual([[created.id, 'downloadable', true]]);
    const raw = await call(srv, s.token, 'GET', '/v1/files/');
    const download = raw.body.items[0].download;
    expect(new Date(download.expires_at).getTime()).toBeGreaterThan(Date.now());
    const fetched = await fetch(download.url, { headers: download.headers });
    expect(fetched.status).toBe(200);
    const body = Buffer.from(await fetched.arrayBuffer());
    expect(body.length).toBe(data.length);
    expect(sha256(body)).toBe(sha256(data));
    expect(fetched.headers.get('content-disposition')).toContain('attachment');
    // The private bucket is not readable without the signature.
    expect((await fetch(download.url.split('?')[0])).status).toBeGreaterThanOrEqual(400);

    // Completing twice is refused.
    const again = await call(srv, s.token, 'POST', `/v1/files/${created.id}/uploaded`, {
      id: created.upload.id,
      path: created.path,
      parts: parts.map((p) => ({ number: p.number, checksum_etag: p.checksumEtag, checksum_sha256_base64: null })),
    });
    expect(again.status).toBe(403);
    expect(again.body.error).toBe('NotPermitted');
  });

  it('refuses an upload whose SHA-256 differs from the one declared, and removes the object', async () => {
    const s = await usageSeller(srv);
    const data = randomBytes(5 * MiB + 10);
    const declared = sha256(Buffer.concat([data.subarray(0, data.length - 1), Buffer.from([data[data.length - 1]! ^ 1])]));
    const created = await s.polar.files.create({
      name: 'tampered.bin',
      mimeType: 'application/octet-stream',
      size: data.length,
      checksumSha256Base64: declared,
      service: 'downloadable',
      upload: { parts: partsOf(data) },
    });
    const parts = await putParts(created.upload, data);
    const res = await call(srv, s.token, 'POST', `/v1/files/${created.id}/uploaded`, {
      id: created.upload.id,
      path: created.upload.path,
      parts: parts.map((p) => ({ number: p.number, checksum_etag: p.checksumEtag, checksum_sha256_base64: p.checksumSha256Base64 })),
    });
    expect(res.status).toBe(422);
    expect(res.body.error).toBe('RequestValidationError');
    expect(res.body.detail[0].loc).toEqual(['body', 'parts']);
    expect(res.body.detail[0].msg).toMatch(/SHA-256/);
    expect(await objectExists(srv.deps.storage.bucket, created.path)).toBe(false);
    expect((await s.polar.files.list({})).result.items).toEqual([]);
  });

  it('refuses completion with an upload id or path that is not the file', async () => {
    const s = await usageSeller(srv);
    const data = randomBytes(1000);
    const created = await s.polar.files.create({
      name: 'small.txt',
      mimeType: 'text/plain',
      size: data.length,
      service: 'downloadable',
      upload: { parts: partsOf(data) },
    });
    const parts = [{ number: 1, checksum_etag: 'x', checksum_sha256_base64: null }];
    const wrongId = await call(srv, s.token, 'POST', `/v1/files/${created.id}/uploaded`, { id: 'nope', path: created.path, parts });
    expect(wrongId.status).toBe(422);
    expect(wrongId.body.detail[0].loc).toEqual(['body', 'id']);
    const wrongPath = await call(srv, s.token, 'POST', `/v1/files/${created.id}/uploaded`, { id: created.upload.id, path: 'x/y', parts });
    expect(wrongPath.body.detail[0].loc).toEqual(['body', 'path']);
    const badEtag = await call(srv, s.token, 'POST', `/v1/files/${created.id}/uploaded`, { id: created.upload.id, path: created.path, parts });
    expect(badEtag.status).toBe(422);
    expect(badEtag.body.detail[0].loc).toEqual(['body', 'parts']);
  });
});

describe('public media', () => {
  it('stores product media in the public bucket with a public URL', async () => {
    const s = await usageSeller(srv);
    const png = Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), randomBytes(2048)]);
    const created = await s.polar.files.create({
      name: 'cover.png',
      mimeType: 'image/png',
      size: png.length,
      checksumSha256Base64: sha256(png),
      service: 'product_media',
      upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: png.length }] },
    });
    const parts = await putParts(created.upload, png);
    const uploaded = await s.polar.files.uploaded({ id: created.id, fileUploadCompleted: { id: created.upload.id, path: created.path, parts } });
    expect(uploaded.service).toBe('product_media');
    if (uploaded.service !== 'product_media') throw new Error('unreachable');
    expect(uploaded.publicUrl).toContain(`/${srv.deps.storage.publicBucket}/${s.organization.id}/${created.id}/cover.png`);
    const res = await fetch(uploaded.publicUrl);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);
    const [listed] = (await s.polar.files.list({ ids: [created.id] })).result.items;
    expect(listed).toMatchObject({ id: created.id, service: 'product_media', sizeReadable: '2.0 KB' });

    const avatar = await s.polar.files.create({
      name: 'logo.svg',
      mimeType: 'image/svg+xml',
      size: 10,
      service: 'organization_avatar',
      upload: { parts: [{ number: 1, chunkStart: 0, chunkEnd: 10 }] },
    });
    expect(avatar.service).toBe('organization_avatar');
  });

  it('applies the per-service MIME and size rules and checks the parts', async () => {
    const s = await usageSeller(srv);
    const create = (body: Record<string, unknown>) =>
      call(srv, s.token, 'POST', '/v1/files/', {
        name: 'f',
        mime_type: 'image/png',
        size: 100,
        service: 'product_media',
        upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 100 }] },
        ...body,
      });
    const pdf = await create({ mime_type: 'application/pdf' });
    expect(pdf.status).toBe(422);
    expect(pdf.body.detail[0].loc).toEqual(['body', 'mime_type']);
    const big = 11 * MiB;
    const huge = await create({ size: big, upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: big }] } });
    expect(huge.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([['body', 'size']]);
    // Downloadables take any type, up to 10 GiB.
    expect((await create({ service: 'downloadable', mime_type: 'application/pdf' })).status).toBe(201);
    const tooBig = 10 * 1024 * MiB + 1;
    const overLimit = await create({ service: 'downloadable', mime_type: 'application/zip', size: tooBig, upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: tooBig }] } });
    expect(overLimit.body.detail.map((d: { loc: unknown[] }) => d.loc)).toContainEqual(['body', 'size']);
    // Parts: contiguous, numbered from 1, all but the last at least 5 MiB, covering the size.
    const gap = await create({ size: 200, upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: 100 }, { number: 2, chunk_start: 150, chunk_end: 200 }] } });
    expect(gap.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual(
      expect.arrayContaining([['body', 'upload', 'parts', 0, 'chunk_end'], ['body', 'upload', 'parts', 1, 'chunk_start']]),
    );
    const short = await create({ size: 50 });
    expect(short.body.detail[0].loc).toEqual(['body', 'upload', 'parts']);
    const numbering = await create({ upload: { parts: [{ number: 2, chunk_start: 0, chunk_end: 100 }] } });
    expect(numbering.body.detail[0].loc).toEqual(['body', 'upload', 'parts', 0, 'number']);
    const service = await create({ service: 'video' });
    expect(service.body.detail[0].loc).toEqual(['body', 'service']);
  });
});

describe('rename, delete and isolation', () => {
  it('renames, deletes (removing the object) and keeps organizations apart', async () => {
    const s = await usageSeller(srv);
    const other = await usageSeller(srv);
    const data = randomBytes(4096);
    const created = await s.polar.files.create({
      name: 'notes.txt',
      mimeType: 'text/plain',
      size: data.length,
      service: 'downloadable',
      upload: { parts: partsOf(data) },
    });
    await s.polar.files.uploaded({ id: created.id, fileUploadCompleted: { id: created.upload.id, path: created.path, parts: await putParts(created.upload, data) } });

    const renamed = await s.polar.files.update({ id: created.id, filePatch: { name: 'Release notes.txt', version: '2' } });
    expect(renamed).toMatchObject({ id: created.id, name: 'Release notes.txt', version: '2', path: created.path });

    // Another organization sees nothing and can change nothing.
    expect((await other.polar.files.list({})).result.items).toEqual([]);
    expect((await other.polar.files.list({ organizationId: s.organization.id })).result.items).toEqual([]);
    for (const [method, path, body] of [
      ['PATCH', `/v1/files/${created.id}`, { name: 'x' }],
      ['DELETE', `/v1/files/${created.id}`, undefined],
      ['POST', `/v1/files/${created.id}/uploaded`, { id: 'x', path: 'y', parts: [{ number: 1, checksum_etag: 'e', checksum_sha256_base64: null }] }],
    ] as const) {
      const res = await call(srv, other.token, method, path, body);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 'ResourceNotFound', detail: 'File not found' });
    }

    expect(await objectExists(srv.deps.storage.bucket, created.path)).toBe(true);
    await s.polar.files.delete({ id: created.id });
    expect(await objectExists(srv.deps.storage.bucket, created.path)).toBe(false);
    expect((await s.polar.files.list({})).result.items).toEqual([]);
    expect((await call(srv, s.token, 'DELETE', `/v1/files/${created.id}`)).status).toBe(404);
  });

  it('refuses missing credentials (401) and tokens without the scope (403)', async () => {
    expect((await call(srv, null, 'GET', '/v1/files/')).status).toBe(401);
    const readOnly = await usageSeller(srv, ['files:read']);
    const res = await call(srv, readOnly.token, 'POST', '/v1/files/', {});
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('NotPermitted');
  });
});
