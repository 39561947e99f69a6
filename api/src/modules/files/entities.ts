/** Files in the object store: downloadables (private bucket), product media and avatars (public bucket). */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';

export const FILE_SERVICES = ['downloadable', 'product_media', 'organization_avatar'] as const;
export type FileService = (typeof FILE_SERVICES)[number];

export const File = defineEntity({
  name: 'File',
  tableName: 'files',
  properties: {
    ...baseProperties,
    organization: () => p.manyToOne(Organization).deleteRule('cascade').index(),
    name: p.string(),
    /** Object key inside the bucket for the service. */
    path: p.string(),
    mimeType: p.string(),
    /** Bytes. */
    size: p.bigint('number'),
    service: p.enum(FILE_SERVICES),
    version: p.string().nullable(),
    /** The object store's multipart upload id, until the upload is completed. */
    uploadId: p.string().nullable(),
    storageVersion: p.string().nullable(),
    checksumEtag: p.string().nullable(),
    checksumSha256Base64: p.string().nullable(),
    checksumSha256Hex: p.string().nullable(),
    lastModifiedAt: p.datetime().nullable(),
    isUploaded: p.boolean().default(false),
    isEnabled: p.boolean().default(true),
    deletedAt: p.datetime().nullable(),
  },
});
export type File = InferEntity<typeof File>;
