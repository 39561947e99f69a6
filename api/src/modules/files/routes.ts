/** /v1/files: create (multipart upload), complete the upload, list, rename, delete. */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { NotPermitted, ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import type { Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
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
import { completeUpload, createFile, deleteFile } from './service.ts';

const idParams = z.object({ id: z.uuid() });

async function findFile(em: EntityManager, principal: Principal, id: string): Promise<File> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const file = await em.findOne(File, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!file) throw ResourceNotFound('File not found');
  return file;
}

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
    async handler({ body, principal, em, deps }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const { file, upload } = await createFile(em, deps.storage, organizationId, body);
      await em.flush();
      return { ...(await serializeFile(file, deps.storage)), upload };
    },
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
    async handler({ params, body, principal, em, deps }) {
      const file = await findFile(em, principal, params.id);
      if (file.isUploaded) throw NotPermitted('This file has already been uploaded');
      await completeUpload(deps.storage, file, body);
      await em.flush();
      return serializeFile(file, deps.storage);
    },
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
      const [items, total] = await em.findAndCount(File, where, {
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
    async handler({ params, body, principal, em, deps }) {
      const file = await findFile(em, principal, params.id);
      if (body.name != null) file.name = body.name;
      if (body.version !== undefined) file.version = body.version;
      await em.flush();
      return serializeFile(file, deps.storage);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/files/:id',
    summary: 'Delete a file (removes the object)',
    tags: ['files'],
    auth: sellerAuth('files:write'),
    params: idParams,
    status: 204,
    async handler({ params, principal, em, deps }) {
      const file = await findFile(em, principal, params.id);
      await deleteFile(deps.storage, file);
      await em.flush();
    },
  }),
];
