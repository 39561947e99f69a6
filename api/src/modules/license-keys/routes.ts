/** /v1/license-keys (seller): list, read, update, and read one activation. */
import { z } from 'zod/v4';
import { inTransaction, type EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import type { Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { LicenseKey, LicenseKeyActivation } from './entities.ts';
import {
  licenseKeyActivationReadSchema,
  licenseKeySchema,
  licenseKeyUpdateSchema,
  licenseKeyWithActivationsSchema,
  serializeActivation,
  serializeLicenseKey,
  serializeLicenseKeyWithActivations,
} from './schemas.ts';

const read = sellerAuth('license_keys:read');
const write = sellerAuth('license_keys:write');
const idParams = z.object({ id: z.uuid() });

async function findVisibleLicenseKey(em: EntityManager, principal: Principal, id: string): Promise<LicenseKey> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const key = await em.findOne(LicenseKey, { id, organization: { $in: orgIds } }, { populate: ['customer'] });
  if (!key) throw ResourceNotFound('License key not found');
  return key;
}

export const routes = [
  route({
    method: 'get',
    path: '/v1/license-keys',
    summary: 'List license keys',
    tags: ['license-keys'],
    auth: read,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      benefit_id: queryList(z.uuid()).optional(),
    }),
    response: listOf(licenseKeySchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.benefit_id) where.benefit = { $in: query.benefit_id };
      const [items, total] = await em.findAndCount(LicenseKey, where, {
        populate: ['customer'],
        orderBy: [{ createdAt: 'desc' }, { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeLicenseKey), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/license-keys/:id',
    summary: 'Get a license key with its activations',
    tags: ['license-keys'],
    auth: read,
    params: idParams,
    response: licenseKeyWithActivationsSchema,
    async handler({ params, principal, em }) {
      const key = await findVisibleLicenseKey(em, principal, params.id);
      await em.populate(key, ['activations']);
      return serializeLicenseKeyWithActivations(key);
    },
  }),
  route({
    method: 'patch',
    path: '/v1/license-keys/:id',
    summary: 'Update a license key (status, usage, limits, expiry)',
    tags: ['license-keys'],
    auth: write,
    params: idParams,
    body: licenseKeyUpdateSchema,
    response: licenseKeySchema,
    async handler({ params, body, principal, em }) {
      const { result } = await inTransaction(em, async (tx) => {
        const key = await findVisibleLicenseKey(tx, principal, params.id);
        if (body.status != null) key.status = body.status;
        if (body.usage !== undefined) key.usage = body.usage;
        if (body.limit_activations !== undefined) key.limitActivations = body.limit_activations;
        if (body.limit_usage !== undefined) key.limitUsage = body.limit_usage;
        if (body.expires_at !== undefined) key.expiresAt = body.expires_at === null ? null : new Date(body.expires_at);
        await tx.flush();
        return serializeLicenseKey(key);
      });
      return result;
    },
  }),
  route({
    method: 'get',
    path: '/v1/license-keys/:id/activations/:activation_id',
    summary: 'Get one activation of a license key',
    tags: ['license-keys'],
    auth: read,
    params: z.object({ id: z.uuid(), activation_id: z.uuid() }),
    response: licenseKeyActivationReadSchema,
    async handler({ params, principal, em }) {
      const key = await findVisibleLicenseKey(em, principal, params.id);
      const activation = await em.findOne(LicenseKeyActivation, { id: params.activation_id, licenseKey: key, deletedAt: null });
      if (!activation) throw ResourceNotFound('License key activation not found');
      return { ...serializeActivation(activation), license_key: serializeLicenseKey(key) };
    },
  }),
];
