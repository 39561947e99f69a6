/**
 * The read model of a product's media file (`ProductMediaFileRead` in the SDK), built synchronously
 * so `serializeProduct` stays synchronous: media live in the public bucket, so the files module's
 * `serializePublicFile` needs only the process-wide storage's public URL.
 */
import type { z } from 'zod/v4';
import { config } from '../../config.ts';
import { createStorage, type Storage } from '../../kit/storage.ts';
import type { File } from '../files/entities.ts';
import { productMediaFileSchema, serializePublicFile } from '../files/schemas.ts';

export const productMediaSchema = productMediaFileSchema;
export type ProductMediaRead = z.infer<typeof productMediaSchema>;

let storage: Storage | undefined;

export function serializeProductMedia(f: File): ProductMediaRead {
  storage ??= createStorage(config());
  return serializePublicFile(f, storage) as ProductMediaRead;
}
