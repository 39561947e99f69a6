/**
 * The read model of a product's media file (`ProductMediaFileRead` in the SDK), built synchronously
 * so `serializeProduct` stays synchronous: media live in the public bucket, so the files module's
 * `serializePublicFile` needs only the process-wide storage's public URL.
 */
import type { z } from 'zod/v4';
import type { Storage } from '../../kit/storage.ts';
import type { File } from '../files/entities.ts';
import { productMediaFileSchema, serializePublicFile } from '../files/schemas.ts';

export const productMediaSchema = productMediaFileSchema;
export type ProductMediaRead = z.infer<typeof productMediaSchema>;

let storage: Pick<Storage, 'publicUrl'> | undefined;

/** The process's storage, for the media's public URLs; the composition root (deps.ts) sets it. */
export function useMediaStorage(s: Pick<Storage, 'publicUrl'>): void {
  storage = s;
}

export function serializeProductMedia(f: File): ProductMediaRead {
  if (!storage) throw new Error('serializeProductMedia: no storage (createDeps sets it)');
  return serializePublicFile(f, storage) as ProductMediaRead;
}

/** The public URL of the key `''`: a media file's URL is this prefix and its URL-encoded path. */
export function mediaPublicUrlPrefix(): string {
  if (!storage) throw new Error('mediaPublicUrlPrefix: no storage (createDeps sets it)');
  return storage.publicUrl('');
}
