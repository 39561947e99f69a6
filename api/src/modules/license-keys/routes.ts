/** /v1/license-keys (seller): list, read, update, and read one activation. */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginationQuery } from '../../kit/pagination.ts';
import { route } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { idParams, listOf, sellerAuth, updateRoute } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { LicenseKeyActivation } from './entities.ts';
import { findVisibleLicenseKey, licenseKeyPage, updateLicenseKey } from './service.ts';
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
      return licenseKeyPage(em, where, query);
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
  updateRoute({
    path: '/v1/license-keys/:id',
    summary: 'Update a license key (status, usage, limits, expiry)',
    tags: ['license-keys'],
    auth: write,
    body: licenseKeyUpdateSchema,
    response: licenseKeySchema,
    update: (tx, { params, body, principal }) => updateLicenseKey(tx, principal, params.id, body),
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
