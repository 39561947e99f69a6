/**
 * Files in the object store, uploaded by the client straight to S3 through presigned multipart part
 * URLs. Create starts the multipart upload and signs one PUT per part; completion assembles the
 * parts, checks the object's size and (when the client gave one) its SHA-256 by reading it back,
 * and only then marks the file uploaded. Delete removes the object and soft-deletes the row.
 *
 * The object store is called outside any transaction (a read-back of a large object must not hold a
 * database connection): each operation does its store work, then writes its row with one flush.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, ResourceNotFound, fieldError } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import type { Storage } from '../../kit/storage.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { File } from './entities.ts';
import { bucketOf, serializeFile, UPLOAD_URL_TTL, type FileCreate, type FilePatch } from './schemas.ts';

/** A live file the principal can see; 404 otherwise. */
export async function findVisibleFile(em: EntityManager, principal: Principal, id: string): Promise<File> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const file = await em.findOne(File, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!file) throw ResourceNotFound('File not found');
  return file;
}

/** Creates the file in the caller's organization with its multipart upload; answers the read model and the part URLs. */
export async function startFileUpload(em: EntityManager, storage: Storage, principal: Principal, input: FileCreate) {
  const organizationId = await resolveWriteOrganization(em, principal, input.organization_id);
  const { file, upload } = await createFile(em, storage, organizationId, input);
  await em.flush();
  return { ...(await serializeFile(file, storage)), upload };
}

/** Completes the upload of a file not yet uploaded (403 once it is). */
export async function finishFileUpload(em: EntityManager, storage: Storage, principal: Principal, id: string, input: UploadCompletion) {
  const file = await findVisibleFile(em, principal, id);
  if (file.isUploaded) throw NotPermitted('This file has already been uploaded');
  await completeUpload(storage, file, input);
  await em.flush();
  return serializeFile(file, storage);
}

/** Renames a file or changes its version. */
export async function editFile(em: EntityManager, storage: Storage, principal: Principal, id: string, input: FilePatch) {
  const file = await findVisibleFile(em, principal, id);
  if (input.name != null) file.name = input.name;
  if (input.version !== undefined) file.version = input.version;
  await em.flush();
  return serializeFile(file, storage);
}

/** Removes the object (or aborts its pending upload) and soft-deletes the file. */
export async function removeFile(em: EntityManager, storage: Storage, principal: Principal, id: string): Promise<void> {
  const file = await findVisibleFile(em, principal, id);
  await deleteFile(storage, file);
  await em.flush();
}

type UploadCompletion = { id: string; path: string; parts: { number: number; checksum_etag: string }[] };

export interface UploadPart {
  number: number;
  chunk_start: number;
  chunk_end: number;
  checksum_sha256_base64: string | null;
  url: string;
  expires_at: string;
  headers: Record<string, string>;
}

/** A file name made safe as the last segment of an object key (no separators or control characters). */
export function keyName(name: string): string {
  const cleaned = name
    .normalize('NFC')
    // eslint-disable-next-line no-control-regex -- stripping control characters is the point
    .replace(/[\u0000-\u001f\u007f/\\]+/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 120);
  return cleaned || 'file';
}

function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/** Creates the row and the multipart upload; returns the file and the presigned part URLs. */
async function createFile(
  em: EntityManager,
  storage: Storage,
  organizationId: string,
  input: FileCreate,
): Promise<{ file: File; upload: { id: string; path: string; parts: UploadPart[] } }> {
  const id = randomUUID();
  const path = `${organizationId}/${id}/${keyName(input.name)}`;
  const bucket = bucketOf(input, storage);
  const headers: Record<string, string> = { 'Content-Type': input.mime_type };
  if (input.service === 'downloadable') headers['Content-Disposition'] = contentDisposition(input.name);
  const uploadId = await storage.client.initiateNewMultipartUpload(bucket, path, headers);

  const expiresAt = new Date(Date.now() + UPLOAD_URL_TTL * 1000).toISOString();
  const parts = await Promise.all(
    input.upload.parts.map(async (p) => ({
      number: p.number,
      chunk_start: p.chunk_start,
      chunk_end: p.chunk_end,
      checksum_sha256_base64: p.checksum_sha256_base64 ?? null,
      url: await storage.client.presignedUrl('PUT', bucket, path, UPLOAD_URL_TTL, {
        partNumber: String(p.number),
        uploadId,
      }),
      expires_at: expiresAt,
      headers: {},
    })),
  );

  const file = em.create(File, {
    id,
    organization: em.getReference(Organization, organizationId),
    name: input.name,
    path,
    mimeType: input.mime_type,
    size: input.size,
    service: input.service,
    version: input.version ?? null,
    uploadId,
    checksumSha256Base64: input.checksum_sha256_base64 ?? null,
    checksumSha256Hex: input.checksum_sha256_base64 ? Buffer.from(input.checksum_sha256_base64, 'base64').toString('hex') : null,
    isUploaded: false,
  });
  return { file, upload: { id: uploadId, path, parts } };
}

async function sha256Of(storage: Storage, bucket: string, key: string): Promise<string> {
  const hash = createHash('sha256');
  const stream: Readable = await storage.client.getObject(bucket, key);
  for await (const chunk of stream) hash.update(chunk as Buffer);
  return hash.digest('base64');
}

/**
 * Completes the multipart upload. Failures are 422: an upload id or path that is not this file's,
 * parts the store refuses, a size other than the declared one, or a SHA-256 other than the one given
 * at creation (the assembled object is then removed, so nothing unverified stays in the store).
 */
async function completeUpload(storage: Storage, file: File, input: UploadCompletion): Promise<void> {
  if (!file.uploadId || input.id !== file.uploadId) throw fieldError(['body', 'id'], 'Unknown upload id for this file', 'value_error', input.id);
  if (input.path !== file.path) throw fieldError(['body', 'path'], 'Path does not match the file', 'value_error', input.path);
  const bucket = bucketOf(file, storage);
  const parts = [...input.parts].sort((a, b) => a.number - b.number).map((p) => ({ part: p.number, etag: p.checksum_etag }));
  try {
    await storage.client.completeMultipartUpload(bucket, file.path, file.uploadId, parts);
  } catch (err) {
    const e = err as { code?: string; message?: string };
    throw fieldError(['body', 'parts'], `The object store refused the upload: ${e.code ?? e.message ?? 'error'}`);
  }

  const stat = await storage.client.statObject(bucket, file.path);
  if (stat.size !== file.size) {
    await storage.client.removeObject(bucket, file.path);
    throw fieldError(['body', 'parts'], `The uploaded object has ${stat.size} bytes, not the declared ${file.size}`);
  }
  if (file.checksumSha256Base64) {
    const actual = await sha256Of(storage, bucket, file.path);
    if (actual !== file.checksumSha256Base64) {
      await storage.client.removeObject(bucket, file.path);
      throw fieldError(
        ['body', 'parts'],
        "The uploaded object's SHA-256 does not match checksum_sha256_base64 given at creation; the object was removed",
        'value_error',
        actual,
      );
    }
  }
  file.isUploaded = true;
  file.uploadId = null;
  file.checksumEtag = stat.etag;
  file.storageVersion = stat.versionId ?? null;
  file.lastModifiedAt = stat.lastModified;
}

/** Removes the object (or aborts the pending upload) and soft-deletes the row. */
async function deleteFile(storage: Storage, file: File): Promise<void> {
  const bucket = bucketOf(file, storage);
  // ignore: an upload already completed or aborted cannot be aborted; an unreachable store fails the removal below
  if (file.uploadId) await storage.client.abortMultipartUpload(bucket, file.path, file.uploadId).catch(() => undefined);
  await storage.client.removeObject(bucket, file.path);
  file.uploadId = null;
  file.deletedAt = new Date();
}
