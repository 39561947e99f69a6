/**
 * Wire shapes of files, as `@polar-sh/sdk` parses them: FileCreate, FileUpload (create response),
 * FileUploadCompleted, FilePatch and the read models DownloadableFileRead (plus `download`, a
 * short-lived presigned URL), ProductMediaFileRead and OrganizationAvatarFileRead (plus `public_url`).
 */
import { z } from 'zod/v4';
import type { Storage } from '../../kit/storage.ts';
import { listOf } from '../../kit/route-helpers.ts';
import { FILE_SERVICES, type File, type FileService } from './entities.ts';

export const MiB = 1024 * 1024;
/** S3: every part but the last is at least 5 MiB, at most 5 GiB; at most 10 000 parts. */
export const MIN_PART_SIZE = 5 * MiB;
export const MAX_PART_SIZE = 5 * 1024 * MiB;
export const MAX_PARTS = 10_000;

export const IMAGE_MIME_TYPES = ['image/jpeg', 'image/png', 'image/gif', 'image/webp', 'image/svg+xml'] as const;

/** Per service: accepted MIME types (null = any) and the largest size in bytes. */
export const SERVICE_RULES: Record<FileService, { mimeTypes: readonly string[] | null; maxSize: number }> = {
  downloadable: { mimeTypes: null, maxSize: 10 * 1024 * MiB },
  product_media: { mimeTypes: IMAGE_MIME_TYPES, maxSize: 10 * MiB },
  organization_avatar: { mimeTypes: IMAGE_MIME_TYPES, maxSize: 10 * MiB },
};

/** Presigned URL lifetimes (seconds): part uploads get an hour, downloads ten minutes. */
export const UPLOAD_URL_TTL = 3600;
export const DOWNLOAD_URL_TTL = 600;

const sha256Base64 = z
  .string()
  .regex(/^[A-Za-z0-9+/]{43}=$/, { message: 'Must be the base64 of a SHA-256 digest (44 characters)' });

const partCreateSchema = z.object({
  number: z.number().int().min(1).max(MAX_PARTS),
  chunk_start: z.number().int().min(0),
  chunk_end: z.number().int().min(0),
  checksum_sha256_base64: sha256Base64.nullish(),
});

export const fileCreateSchema = z
  .object({
    organization_id: z.uuid().nullish(),
    name: z.string().trim().min(1).max(255),
    mime_type: z
      .string()
      .max(255)
      .regex(/^[\w.+-]+\/[\w.+-]+$/, { message: 'Must be a MIME type such as application/pdf' })
      .transform((v) => v.toLowerCase()),
    size: z.number().int().min(1),
    checksum_sha256_base64: sha256Base64.nullish(),
    service: z.enum(FILE_SERVICES),
    version: z.string().max(255).nullish(),
    upload: z.object({ parts: z.array(partCreateSchema).min(1).max(MAX_PARTS) }),
  })
  .superRefine((f, ctx) => {
    const rules = SERVICE_RULES[f.service];
    if (rules.mimeTypes && !rules.mimeTypes.includes(f.mime_type)) {
      ctx.addIssue({
        code: 'custom',
        path: ['mime_type'],
        message: `A ${f.service} file must be one of ${rules.mimeTypes.join(', ')}`,
        input: f.mime_type,
      });
    }
    if (f.size > rules.maxSize) {
      ctx.addIssue({
        code: 'custom',
        path: ['size'],
        message: `A ${f.service} file may be at most ${sizeReadable(rules.maxSize)}`,
        input: f.size,
      });
    }
    // Parts numbered 1..n in order, contiguous byte ranges [chunk_start, chunk_end) covering [0, size).
    const parts = f.upload.parts;
    let expectedStart = 0;
    parts.forEach((p, i) => {
      const at = (field: string) => ['upload', 'parts', i, field];
      const last = i === parts.length - 1;
      if (p.number !== i + 1) ctx.addIssue({ code: 'custom', path: at('number'), message: `Expected part number ${i + 1}` });
      if (p.chunk_start !== expectedStart) {
        ctx.addIssue({ code: 'custom', path: at('chunk_start'), message: `Expected chunk_start ${expectedStart}` });
      }
      const length = p.chunk_end - p.chunk_start;
      if (length < (last ? 0 : MIN_PART_SIZE)) {
        ctx.addIssue({
          code: 'custom',
          path: at('chunk_end'),
          message: last ? 'chunk_end must not be before chunk_start' : `Every part but the last must be at least ${MIN_PART_SIZE} bytes`,
        });
      }
      if (length > MAX_PART_SIZE) {
        ctx.addIssue({ code: 'custom', path: at('chunk_end'), message: `A part may be at most ${MAX_PART_SIZE} bytes` });
      }
      expectedStart = p.chunk_end;
    });
    if (expectedStart !== f.size) {
      ctx.addIssue({ code: 'custom', path: ['upload', 'parts'], message: `The parts must cover exactly size (${f.size}) bytes` });
    }
  });
export type FileCreate = z.infer<typeof fileCreateSchema>;

export const fileUploadCompletedSchema = z.object({
  id: z.string().min(1),
  path: z.string().min(1),
  parts: z
    .array(
      z.object({
        number: z.number().int().min(1).max(MAX_PARTS),
        checksum_etag: z.string().min(1).max(255),
        checksum_sha256_base64: sha256Base64.nullish(),
      }),
    )
    .min(1)
    .max(MAX_PARTS),
});

export const filePatchSchema = z.object({
  name: z.string().trim().min(1).max(255).nullish(),
  version: z.string().max(255).nullish(),
});
export type FilePatch = z.infer<typeof filePatchSchema>;

const baseShape = {
  id: z.uuid(),
  organization_id: z.uuid(),
  name: z.string(),
  path: z.string(),
  mime_type: z.string(),
  size: z.number().int(),
  storage_version: z.string().nullable(),
  checksum_etag: z.string().nullable(),
  checksum_sha256_base64: z.string().nullable(),
  checksum_sha256_hex: z.string().nullable(),
  last_modified_at: z.string().nullable(),
  version: z.string().nullable(),
  is_uploaded: z.boolean(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  size_readable: z.string(),
};

export const downloadSchema = z.object({
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  expires_at: z.string(),
});

export const productMediaFileSchema = z.object({ ...baseShape, service: z.literal('product_media'), public_url: z.string() });

/** A downloadable file with its short-lived download link (files API and customer portal). */
export const downloadableFileSchema = z.object({ ...baseShape, service: z.literal('downloadable'), download: downloadSchema });

export const fileReadSchema = z.union([
  downloadableFileSchema,
  productMediaFileSchema,
  z.object({ ...baseShape, service: z.literal('organization_avatar'), public_url: z.string() }),
]);
export type FileRead = z.infer<typeof fileReadSchema>;

export const fileUploadPartSchema = z.object({
  number: z.number().int(),
  chunk_start: z.number().int(),
  chunk_end: z.number().int(),
  checksum_sha256_base64: z.string().nullable(),
  url: z.string(),
  expires_at: z.string(),
  headers: z.record(z.string(), z.string()),
});

export const fileUploadSchema = z.intersection(
  fileReadSchema,
  z.object({ upload: z.object({ id: z.string(), path: z.string(), parts: z.array(fileUploadPartSchema) }) }),
);

export const fileListSchema = listOf(fileReadSchema);

/** "1.5 MB": base-1024 steps with one decimal, as the public API renders sizes. */
export function sizeReadable(bytes: number): string {
  let n = bytes;
  for (const unit of ['', 'K', 'M', 'G', 'T', 'P', 'E', 'Z']) {
    if (Math.abs(n) < 1024) return `${n.toFixed(1)} ${unit}B`;
    n /= 1024;
  }
  return `${n.toFixed(1)} YB`;
}

/** The bucket a file's object lives in: downloadables are private, media and avatars public. */
export function bucketOf(file: Pick<File, 'service'>, storage: Storage): string {
  return file.service === 'downloadable' ? storage.bucket : storage.publicBucket;
}

function baseOf(file: File) {
  return {
    id: file.id,
    organization_id: file.organization.id,
    name: file.name,
    path: file.path,
    mime_type: file.mimeType,
    size: file.size,
    storage_version: file.storageVersion ?? null,
    checksum_etag: file.checksumEtag ?? null,
    checksum_sha256_base64: file.checksumSha256Base64 ?? null,
    checksum_sha256_hex: file.checksumSha256Hex ?? null,
    last_modified_at: file.lastModifiedAt?.toISOString() ?? null,
    version: file.version ?? null,
    is_uploaded: file.isUploaded,
    created_at: file.createdAt.toISOString(),
    modified_at: file.modifiedAt?.toISOString() ?? null,
    size_readable: sizeReadable(file.size),
  };
}

export type PublicFileRead = Extract<FileRead, { public_url: string }>;

/**
 * The read model of a product media or organization avatar file, synchronously (no presigning:
 * these live in the public bucket and carry `public_url`).
 */
export function serializePublicFile(file: File, storage: Pick<Storage, 'publicUrl'>): PublicFileRead {
  if (file.service === 'downloadable') throw new Error('serializePublicFile: a downloadable has no public URL');
  return { ...baseOf(file), service: file.service, public_url: storage.publicUrl(file.path) } as PublicFileRead;
}

/**
 * The read model of any file, for this module and others (product medias, downloadable benefits).
 * Downloadables carry a fresh presigned `download` URL (DOWNLOAD_URL_TTL, signed locally: no call to
 * the store); product media and organization avatars carry their `public_url`.
 */
export async function serializeFile(file: File, storage: Storage): Promise<FileRead> {
  if (file.service !== 'downloadable') return serializePublicFile(file, storage);
  const expiresAt = new Date(Date.now() + DOWNLOAD_URL_TTL * 1000);
  const url = await storage.client.presignedGetObject(storage.bucket, file.path, DOWNLOAD_URL_TTL);
  return { ...baseOf(file), service: 'downloadable', download: { url, headers: {}, expires_at: expiresAt.toISOString() } };
}
