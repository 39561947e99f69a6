/**
 * /v1/tax-rates: an organization's tax rate per country (`organizations:read|write`). A checkout taxes
 * its net amount at the rate of its billing address's country, none when no rate matches.
 */
import { z } from 'zod/v4';
import { paginated, paginationQuery, pageOffset, sortingQuery, toOrderBy } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { queryList } from '../../kit/validation.ts';
import { createRoute, deleteRoute, listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { scopedOrganizationIds } from '../organizations/scope.ts';
import { countrySchema } from '../customers/schemas.ts';
import { TaxRate } from './entities.ts';
import { deleteTaxRate, setTaxRate } from './service.ts';
import { findAndCountInOneSnapshot } from '../../kit/db.ts';

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

export const routes: RouteSpec[] = [
  createRoute({
    path: '/v1/tax-rates/',
    summary: "Set the organization's tax rate for a country",
    tags: ['tax-rates'],
    auth: WRITE,
    body: taxRateCreateSchema,
    response: taxRateSchema,
    create: async (tx, { body, principal }) => serializeTaxRate(await setTaxRate(tx, principal, body)),
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
      const [items, total] = await findAndCountInOneSnapshot(em, TaxRate, where, {
        orderBy: [...toOrderBy(query.sorting, { created_at: 'createdAt', basis_points: 'basisPoints' }), { id: 'asc' }],
        ...pageOffset(query),
      });
      return paginated(items.map(serializeTaxRate), total, query);
    },
  }),
  deleteRoute({
    path: '/v1/tax-rates/:id',
    summary: 'Delete a tax rate',
    tags: ['tax-rates'],
    auth: WRITE,
    remove: (tx, { params, principal }) => deleteTaxRate(tx, principal, params.id),
  }),
];
