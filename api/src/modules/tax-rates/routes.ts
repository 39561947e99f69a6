/**
 * /v1/tax-rates: an organization's tax rate per country (`organizations:read|write`). A checkout taxes
 * its net amount at the rate of its billing address's country, none when no rate matches.
 */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound, fieldError } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { countrySchema } from '../customers/schemas.ts';
import { TaxRate } from './entities.ts';

const READ: AuthRequirement = sellerAuth('organizations:read');
const WRITE: AuthRequirement = sellerAuth('organizations:write');

export const taxRateCreateSchema = z.object({
  country: countrySchema,
  basis_points: z.number().int().min(0).max(10_000),
  organization_id: z.uuid().nullish(),
});

export const taxRateSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  organization_id: z.uuid(),
  country: z.string(),
  basis_points: z.number().int(),
});

export function serializeTaxRate(t: TaxRate): z.infer<typeof taxRateSchema> {
  return {
    id: t.id,
    created_at: t.createdAt.toISOString(),
    modified_at: t.modifiedAt?.toISOString() ?? null,
    organization_id: t.organization.id,
    country: t.country,
    basis_points: t.basisPoints,
  };
}

async function getVisibleTaxRate(em: EntityManager, principal: Principal, id: string): Promise<TaxRate> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const t = await em.findOne(TaxRate, { id, organization: { $in: orgIds } });
  if (!t) throw ResourceNotFound('Tax rate not found');
  return t;
}

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/tax-rates/',
    summary: "Set the organization's tax rate for a country",
    tags: ['tax-rates'],
    auth: WRITE,
    body: taxRateCreateSchema,
    status: 201,
    response: taxRateSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const existing = await em.findOne(TaxRate, { organization: organizationId, country: body.country });
      if (existing) {
        throw fieldError(['body', 'country'], 'A tax rate for this country already exists.', 'value_error', body.country);
      }
      const t = em.create(TaxRate, {
        organization: em.getReference(Organization, organizationId),
        country: body.country,
        basisPoints: body.basis_points,
      });
      await em.flush();
      return serializeTaxRate(t);
    },
  }),
  route({
    method: 'get',
    path: '/v1/tax-rates/',
    summary: 'List tax rates',
    tags: ['tax-rates'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      country: queryList(countrySchema).optional(),
      sorting: sortingQuery(['created_at', 'country', 'basis_points']),
    }),
    response: listOf(taxRateSchema),
    async handler({ query, principal, em }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const where: Record<string, unknown> = { organization: { $in: orgIds } };
      if (query.country) where.country = { $in: query.country };
      const [items, total] = await em.findAndCount(TaxRate, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt', basis_points: 'basisPoints' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeTaxRate), total, query);
    },
  }),
  route({
    method: 'delete',
    path: '/v1/tax-rates/:id',
    summary: 'Delete a tax rate',
    tags: ['tax-rates'],
    auth: WRITE,
    params: z.object({ id: z.uuid() }),
    status: 204,
    async handler({ params, principal, em }) {
      em.remove(await getVisibleTaxRate(em, principal, params.id));
      await em.flush();
    },
  }),
];
