/**
 * The read model of a product's media file (`ProductMediaFileRead` in the SDK), built synchronously
 * so `serializeProduct` stays synchronous. Same shape as the `product_media` variant of the files
 * module's `serializeFile` (which is async and takes the Storage): media live in the public bucket,
 * so `public_url` is the object's plain URL.
 */
import { z } from 'zod/v4';
import { config } from '../../config.ts';
import { createStorage, type Storage } from '../../kit/storage.ts';
import type { File } from '../files/entities.ts';
import { sizeReadable } from '../files/schemas.ts';

export const productMediaSchema = z.object({
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
  service: z.literal('product_media'),
  is_uploaded: z.boolean(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  size_readable: z.string(),
  public_url: z.string(),
});
export type ProductMediaRead = z.infer<typeof productMediaSchema>;

let storage: Storage | undefined;
function publicUrl(path: string): string {
  storage ??= createStorage(config());
  return storage.publicUrl(path);
}

export function serializeProductMedia(f: File): ProductMediaRead {
  return {
    id: f.id,
    organization_id: f.organization.id,
    name: f.name,
    path: f.path,
    mime_type: f.mimeType,
    size: f.size,
    storage_version: f.storageVersion ?? null,
    checksum_etag: f.checksumEtag ?? null,
    checksum_sha256_base64: f.checksumSha256Base64 ?? null,
    checksum_sha256_hex: f.checksumSha256Hex ?? null,
    last_modified_at: f.lastModifiedAt?.toISOString() ?? null,
    version: f.version ?? null,
    service: 'product_media',
    is_uploaded: f.isUploaded,
    created_at: f.createdAt.toISOString(),
    modified_at: f.modifiedAt?.toISOString() ?? null,
    size_readable: sizeReadable(f.size),
    public_url: publicUrl(f.path),
  };
}
