/** /v1/files: create (multipart upload), complete the upload, list, rename, delete. */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { idParams, sellerAuth } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { File } from './entities.ts';
import {
  fileCreateSchema,
  fileListSchema,
  filePatchSchema,
  fileReadSchema,
  fileUploadCompletedSchema,
  fileUploadSchema,
  serializeFile,
} from './schemas.ts';
import { editFile, finishFileUpload, removeFile, startFileUpload } from './service.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

// The object store is called outside any transaction: each service call saves its row once, after the store.
export const routes = [
  route({
    method: 'post',
    path: '/v1/files/',
    summary: 'Create a file and its multipart upload (presigned part URLs)',
    tags: ['files'],
    auth: sellerAuth('files:write'),
    body: fileCreateSchema,
    status: 201,
    response: fileUploadSchema,
    handler: ({ body, principal, em, deps }) => startFileUpload(em, deps.storage, principal, body),
  }),
  route({
    method: 'post',
    path: '/v1/files/:id/uploaded',
    summary: 'Complete a file upload',
    tags: ['files'],
    auth: sellerAuth('files:write'),
    params: idParams,
    body: fileUploadCompletedSchema,
    response: fileReadSchema,
    handler: ({ params, body, principal, em, deps }) => finishFileUpload(em, deps.storage, principal, params.id, body),
  }),
  route({
    method: 'get',
    path: '/v1/files/',
    summary: 'List uploaded files',
    tags: ['files'],
    auth: sellerAuth('files:read'),
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      ids: queryList(z.uuid()).optional(),
    }),
    response: fileListSchema,
    async handler({ query, principal, em, deps }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds }, isUploaded: true, deletedAt: null };
      if (query.ids) where.id = { $in: query.ids };
      const [items, total] = await findAndCountInOneSnapshot(em, File, where, {
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(await Promise.all(items.map((f) => serializeFile(f, deps.storage))), total, query);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/files/:id',
    summary: "Update a file's name or version",
    tags: ['files'],
    auth: sellerAuth('files:write'),
    params: idParams,
    body: filePatchSchema,
    response: fileReadSchema,
    handler: ({ params, body, principal, em, deps }) => editFile(em, deps.storage, principal, params.id, body),
  }),
  route({
    method: 'delete',
    path: '/v1/files/:id',
    summary: 'Delete a file (removes the object)',
    tags: ['files'],
    auth: sellerAuth('files:write'),
    params: idParams,
    status: 204,
    handler: ({ params, principal, em, deps }) => removeFile(em, deps.storage, principal, params.id),
  }),
];
