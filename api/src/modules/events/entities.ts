/**
 * Usage events: what meters count. Append-only and high-volume, so the table is lean: no
 * modified_at (events never change), `created_at` is when we ingested it, `timestamp` is when it
 * happened. Rows are written in bulk by `service.ts` (COPY, or one INSERT … SELECT inside a
 * caller's transaction), not through the unit of work; the entity exists for the schema, the
 * migration and ad-hoc reads.
 *
 * Indexes: every read is scoped to one organization and then narrowed by event name, by customer
 * (id or external id) or by time, so the three composite b-trees below serve the meter and list
 * queries. No GIN index on metadata: meter filters compare by JSON type (`jsonb_typeof` + `->`),
 * which a GIN index does not serve, and it would cost ingest throughput on the hottest table.
 */
import { randomUUID } from 'node:crypto';
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import type { Metadata } from '../../kit/entity.ts';
import { Organization } from '../organizations/entities.ts';
import { Customer } from '../customers/entities.ts';

export const EVENT_SOURCES = ['system', 'user'] as const;
export type EventSource = (typeof EVENT_SOURCES)[number];

export const Event = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    id: p.uuid().primary().onCreate(() => randomUUID()),
    /** When the event was ingested. */
    createdAt: p.datetime().onCreate(() => new Date()),
    /** When the event happened (defaults to the ingestion time; never in the future). */
    timestamp: p.datetime(),
    name: p.string(),
    source: p.enum(EVENT_SOURCES),
    organization: () => p.manyToOne(Organization).deleteRule('cascade'),
    /** Set when ingested with `customer_id`; events sent with an external id keep it null. */
    customer: () => p.manyToOne(Customer).nullable().deleteRule('set null'),
    /** The seller's own customer id; matched against `customers.external_id` when read. */
    externalCustomerId: p.string().nullable(),
    metadata: p.json<Metadata>(),
    /** The id of the transaction that wrote the row (a column default): what rollup merges and reads compare with a meter's `rolled_snapshot`. */
    xid: p.bigint().nullable().defaultRaw('(pg_current_xact_id()::text::bigint)').lazy(),
  },
  indexes: [
    { name: 'events_organization_name_timestamp_index', properties: ['organization', 'name', 'timestamp'] },
    { name: 'events_organization_customer_timestamp_index', properties: ['organization', 'customer', 'timestamp'] },
    {
      name: 'events_organization_external_customer_timestamp_index',
      properties: ['organization', 'externalCustomerId', 'timestamp'],
    },
    { name: 'events_organization_timestamp_index', properties: ['organization', 'timestamp'] },
    {
      name: 'events_xid_brin',
      expression: 'create index "events_xid_brin" on "events" using brin ("xid") with (pages_per_range = 16, autosummarize = on)',
    },
  ],
});
export type Event = InferEntity<typeof Event>;
