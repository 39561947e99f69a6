/** /v1/events: ingest (all-or-nothing batches), list and read. */
import { z } from 'zod/v4';
import { ResourceNotFound } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset, sortingQuery } from '../../kit/pagination.ts';
import { checkedBody, route } from '../../kit/routes.ts';
import { isoDateTime, queryList } from '../../kit/validation.ts';
import { sellerAuth } from '../../kit/route-helpers.ts';
import { visibleOrganizationIds, scopedOrganizationIds } from '../organizations/scope.ts';
import { EVENT_SOURCES } from './entities.ts';
import { eventListSchema, eventSchema, eventsIngestRequestSchema, eventsIngestResponseSchema, serializeEvent } from './schemas.ts';
import { customerFor, getEvent, ingestEvents, listEvents } from './service.ts';
import { metadataQueryOf } from './sql.ts';
import { ingestPlainBatch } from './pipelined.ts';
import { commitStreamedIngest } from './streamed.ts';

const datetime = isoDateTime().transform((v) => new Date(v));

export const routes = [
  route({
    method: 'post',
    path: '/v1/events/ingest',
    summary: 'Ingest a batch of events (all or nothing)',
    tags: ['events'],
    auth: sellerAuth('events:write'),
    body: eventsIngestRequestSchema,
    handlerChecksBody: true,
    response: eventsIngestResponseSchema,
    async handler({ req, principal, em }) {
      // A batch read as it arrived commits here; a plain batch is checked while its rows are written;
      // any other body gets the usual checks and answers.
      const streamed = await commitStreamedIngest(req);
      if (streamed !== null) return { inserted: streamed };
      const inserted = await ingestPlainBatch(em, principal, req.body);
      if (inserted !== null) return { inserted };
      return { inserted: await ingestEvents(em, principal, checkedBody(req, eventsIngestRequestSchema).events) };
    },
  }),
  route({
    method: 'get',
    path: '/v1/events/',
    summary: 'List events',
    tags: ['events'],
    auth: sellerAuth('events:read'),
    query: z.object({
      ...paginationQuery,
      start_timestamp: datetime.optional(),
      end_timestamp: datetime.optional(),
      organization_id: queryList(z.uuid()).optional(),
      customer_id: queryList(z.uuid()).optional(),
      external_customer_id: queryList(z.string()).optional(),
      source: queryList(z.enum(EVENT_SOURCES)).optional(),
      name: queryList(z.string()).optional(),
      sorting: sortingQuery(['timestamp'], ['-timestamp']),
    }),
    response: eventListSchema,
    async handler({ query, principal, em, req }) {
      const orgIds = await scopedOrganizationIds(em, principal, query.organization_id);
      const { rows, total, customers } = await listEvents(
        em,
        {
          organizationIds: orgIds,
          startTimestamp: query.start_timestamp,
          endTimestamp: query.end_timestamp,
          customerIds: query.customer_id,
          externalCustomerIds: query.external_customer_id,
          sources: query.source,
          names: query.name,
          metadata: metadataQueryOf(req.query as Record<string, unknown>),
        },
        { ...pageOffset(query), ascending: query.sorting[0] === 'timestamp' },
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
    path: '/v1/events/:id',
    summary: 'Get an event',
    tags: ['events'],
    auth: sellerAuth('events:read'),
    params: z.object({ id: z.uuid() }),
    response: eventSchema,
    async handler({ params, principal, em }) {
      const found = await getEvent(em, await visibleOrganizationIds(em, principal), params.id);
      if (!found) throw ResourceNotFound('Event not found');
      return serializeEvent(found.row, found.customer);
    },
  }),
];
