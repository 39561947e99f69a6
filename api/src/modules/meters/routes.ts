/** /v1/meters: create, list, read, update; the events a meter matches and its quantities over time. */
import { z } from 'zod/v4';
import type { EntityManager } from '../../kit/db.ts';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import type { Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { isoDateTime, queryList } from '../../kit/validation.ts';
import { listOf, sellerAuth } from '../../kit/route-helpers.ts';
import { resolveWriteOrganization, visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { eventListSchema, serializeEvent } from '../events/schemas.ts';
import { customerFor, listEvents } from '../events/service.ts';
import { metadataQueryOf, SqlParams } from '../events/sql.ts';
import { Meter } from './entities.ts';
import {
  meterCreateSchema,
  meterQuantitiesSchema,
  meterSchema,
  meterUpdateSchema,
  serializeMeter,
  TIME_INTERVALS,
} from './schemas.ts';
import { checkRange, listMeterIds, meterCondition, meterQuantities, saveMeterChange, saveNewMeter } from './service.ts';
import { cachedQuantitiesJson, rememberMeter } from './quantities-read.ts';
import { meterWithRollupState } from './rollups.ts';

const idParams = z.object({ id: z.uuid() });
const datetime = isoDateTime().transform((v) => new Date(v));

const listSchema = listOf(meterSchema);

async function findMeter(em: EntityManager, principal: Principal, id: string): Promise<Meter> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const meter = await em.findOne(Meter, { id, organization: { $in: orgIds } });
  if (!meter) throw ResourceNotFound('Meter not found');
  return meter;
}

export const routes = [
  route({
    method: 'post',
    path: '/v1/meters/',
    summary: 'Create a meter',
    tags: ['meters'],
    auth: sellerAuth('meters:write'),
    body: meterCreateSchema,
    status: 201,
    response: meterSchema,
    async handler({ body, principal, em }) {
      const organizationId = await resolveWriteOrganization(em, principal, body.organization_id);
      return serializeMeter(await saveNewMeter(em, organizationId, body));
    },
  }),
  route({
    method: 'get',
    path: '/v1/meters/',
    summary: 'List meters',
    tags: ['meters'],
    auth: sellerAuth('meters:read'),
    query: z.object({
      ...paginationQuery,
      organization_id: queryList(z.uuid()).optional(),
      query: z.string().optional(),
      sorting: sortingQuery(['created_at', 'name']),
    }),
    response: listSchema,
    async handler({ query, principal, em, req }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const { ids, total } = await listMeterIds(
        em,
        {
          organizationIds: orgIds,
          query: query.query,
          metadata: metadataQueryOf(req.query as Record<string, unknown>),
          sorting: query.sorting,
        },
        pageOffset(query),
      );
      const meters = ids.length ? await em.find(Meter, { id: { $in: ids } }) : [];
      const byId = new Map(meters.map((m) => [m.id, m]));
      return paginated(
        ids.map((id) => serializeMeter(byId.get(id)!)),
        total,
        query,
      );
    },
  }),
  route({
    method: 'get',
    path: '/v1/meters/:id',
    summary: 'Get a meter',
    tags: ['meters'],
    auth: sellerAuth('meters:read'),
    params: idParams,
    response: meterSchema,
    async handler({ params, principal, em }) {
      return serializeMeter(await findMeter(em, principal, params.id));
    },
  }),
  route({
    method: 'patch',
    path: '/v1/meters/:id',
    summary: 'Update a meter',
    tags: ['meters'],
    auth: sellerAuth('meters:write'),
    params: idParams,
    body: meterUpdateSchema,
    response: meterSchema,
    async handler({ params, body, principal, em }) {
      return serializeMeter(await saveMeterChange(em, await findMeter(em, principal, params.id), body));
    },
  }),
  route({
    method: 'get',
    path: '/v1/meters/:id/events',
    summary: 'List the events a meter matches',
    tags: ['meters'],
    auth: sellerAuth('meters:read'),
    params: idParams,
    query: z.object({ ...paginationQuery }),
    response: eventListSchema,
    async handler({ params, query, principal, em }) {
      const meter = await findMeter(em, principal, params.id);
      const sql = new SqlParams();
      const condition = meterCondition(meter, sql);
      const { rows, total, customers } = await listEvents(
        em,
        { organizationIds: [meter.organization.id], condition },
        { ...pageOffset(query), ascending: false },
        sql,
      );
      return paginated(
        rows.map((r) => serializeEvent(r, customerFor(r, customers))),
        total,
        query,
      );
    },
  }),
  route({
    method: 'get',
    path: '/v1/meters/:id/quantities',
    summary: "A meter's quantities per interval step",
    tags: ['meters'],
    auth: sellerAuth('meters:read'),
    params: idParams,
    query: z.object({
      start_timestamp: datetime,
      end_timestamp: datetime,
      interval: z.enum(TIME_INTERVALS),
      customer_id: queryList(z.uuid()).optional(),
      external_customer_id: queryList(z.string()).optional(),
    }),
    response: meterQuantitiesSchema,
    async handler({ params, query, principal, em }) {
      const orgIds = await visibleOrganizationIds(em, principal);
      const q = {
        start: query.start_timestamp,
        end: query.end_timestamp,
        interval: query.interval,
        customerIds: query.customer_id,
        externalCustomerIds: query.external_customer_id,
      };
      checkRange(q);
      // One prepared statement answering the JSON when this process knows the meter's definition.
      const body = await cachedQuantitiesJson(em, params.id, orgIds, q);
      if (body) return body;
      // The meter, its definition and its rollups' state in one plain statement (no ORM entity).
      const meter = await meterWithRollupState(em, params.id, orgIds);
      if (!meter) throw ResourceNotFound('Meter not found');
      const quantities = await meterQuantities(
        em,
        { id: meter.id, organization: { id: meter.organizationId }, filter: meter.filter, aggregation: meter.aggregation },
        q,
        meter,
      );
      rememberMeter(meter.id, meter);
      return { quantities };
    },
  }),
];
