/**
 * /v1/customers: create, list, read, update, (soft) delete and state, by id and by external id.
 * External-id routes are declared first so `/external/...` never reaches the `:id` routes.
 */
import type { Request } from 'express';
import { z } from 'zod/v4';
import { RequestValidationError, ResourceNotFound, type ValidationIssue } from '../../kit/errors.ts';
import { paginationQuery, sortingQuery } from '../../kit/pagination.ts';
import type { AuthRequirement } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { inTransaction } from '../../kit/db.ts';
import { queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { resolveWriteOrganization, scopedOrganizationIds, visibleOrganizationIds } from '../organizations/scope.ts';
import { customerJson, listCustomersJson } from './read-sql.ts';
import {
  customerCreateSchema,
  customerSchema,
  customerStateSchema,
  customerUpdateSchema,
  serializeCustomer,
  type CustomerUpdate,
} from './schemas.ts';
import {
  createCustomerWithEvent,
  deleteVisibleCustomer,
  updateVisibleCustomer,
  visibleCustomerState,
  type CustomerLookup,
} from './service.ts';

const READ: AuthRequirement = sellerAuth('customers:read');
const WRITE: AuthRequirement = sellerAuth('customers:write');
const listSchema = listOf(customerSchema);

/**
 * `metadata[key]=value` filters (deepObject, as the SDK sends them); repeated values of one key are
 * alternatives, keys combine with AND. Values compare as text, so `5` and `true` match integers and booleans.
 */
function metadataFilters(req: Request): [string, string[]][] {
  const issues: ValidationIssue[] = [];
  const clauses: [string, string[]][] = [];
  for (const [param, value] of Object.entries(req.query)) {
    const m = /^metadata\[(.*)\]$/.exec(param);
    if (!m) continue;
    const key = m[1]!;
    const values = (Array.isArray(value) ? value : [value]).map(String);
    if (key.length < 1 || key.length > 40) {
      issues.push({ type: 'value_error', loc: ['query', 'metadata', key], msg: 'Metadata keys have 1 to 40 characters', input: key });
      continue;
    }
    clauses.push([key, values]);
  }
  if (issues.length) throw new RequestValidationError(issues);
  return clauses;
}

function lookupRoutes(base: string, lookup: (params: Record<string, string>) => CustomerLookup, params: z.ZodType): RouteSpec[] {
  return [
    route({
      method: 'get',
      path: `${base}/state`,
      summary: 'Get a customer with their active subscriptions and granted benefits',
      tags: ['customers'],
      auth: READ,
      params,
      response: customerStateSchema,
      async handler({ params: p, principal, em }) {
        return visibleCustomerState(em, principal, lookup(p as Record<string, string>));
      },
    }),
    route({
      method: 'get',
      path: base,
      summary: 'Get a customer',
      tags: ['customers'],
      auth: READ,
      params,
      response: customerSchema,
      async handler(ctx) {
        const { params: p, principal, sql } = ctx;
        const json = await customerJson(sql, await visibleOrganizationIds(() => ctx.em, principal), lookup(p as Record<string, string>));
        if (!json) throw ResourceNotFound('Customer not found');
        return json;
      },
    }),
    route({
      method: 'patch',
      path: base,
      summary: 'Update a customer',
      tags: ['customers'],
      auth: WRITE,
      params,
      body: customerUpdateSchema,
      response: customerSchema,
      async handler({ params: p, body, principal, em }) {
        const { result: c } = await inTransaction(em, (tx) => updateVisibleCustomer(tx, principal, lookup(p as Record<string, string>), body as CustomerUpdate));
        return serializeCustomer(c);
      },
    }),
    route({
      method: 'delete',
      path: base,
      summary: 'Delete a customer (their email and external id become free again)',
      tags: ['customers'],
      auth: WRITE,
      params,
      status: 204,
      async handler({ params: p, principal, em, deps }) {
        const { afterCommit } = await inTransaction(em, (tx, after) => deleteVisibleCustomer(tx, after, deps, principal, lookup(p as Record<string, string>)));
        await afterCommit();
      },
    }),
  ];
}

export const routes: RouteSpec[] = [
  route({
    method: 'post',
    path: '/v1/customers/',
    summary: 'Create a customer',
    tags: ['customers'],
    auth: WRITE,
    body: customerCreateSchema,
    status: 201,
    response: customerSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      const { result: c } = await inTransaction(em, (tx) => createCustomerWithEvent(tx, organizationId, body));
      return serializeCustomer(c);
    },
  }),
  route({
    method: 'get',
    path: '/v1/customers/',
    summary: 'List customers',
    tags: ['customers'],
    auth: READ,
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      email: z.string().optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'email', 'name']),
    }),
    response: listSchema,
    async handler(ctx) {
      const { req, query, principal, sql } = ctx;
      const orgIds = await scopedOrganizationIds(() => ctx.em, principal, query.organization_id);
      return listCustomersJson(
        sql,
        { organizationIds: orgIds, email: query.email, query: query.query, metadata: metadataFilters(req) },
        query.sorting,
        query,
      );
    },
  }),
  ...lookupRoutes('/v1/customers/external/:external_id', (p) => ({ externalId: p.external_id! }), z.object({ external_id: z.string().min(1) })),
  ...lookupRoutes('/v1/customers/:id', (p) => ({ id: p.id! }), z.object({ id: z.uuid() })),
];
