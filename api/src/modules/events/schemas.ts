/** Wire shapes of events, as `@polar-sh/sdk` parses them (Event, EventsIngest, EventsIngestResponse). */
import { avatarUrl, serializeBillingAddress } from '../customers/schemas.ts';
import { z } from 'zod/v4';
import { isoDateTime, metadataSchema } from '../../kit/validation.ts';
import { listOf, metadataOutputSchema } from '../../kit/route-helpers.ts';
import type { BillingAddress } from '../customers/entities.ts';
import { EVENT_SOURCES } from './entities.ts';
import { acceptsIngestBody } from './fast-validation.ts';

export const eventCreateSchema = z
  .object({
    name: z.string().min(1).max(255),
    timestamp: isoDateTime().optional(),
    metadata: metadataSchema.optional(),
    organization_id: z.uuid().nullish(),
    customer_id: z.uuid().optional(),
    external_customer_id: z.string().min(1).max(255).optional(),
  })
  .superRefine((e, ctx) => {
    if (e.customer_id === undefined && e.external_customer_id === undefined) {
      ctx.addIssue({ code: 'custom', path: ['customer_id'], message: 'Either customer_id or external_customer_id is required' });
    }
  });
export type EventCreate = z.infer<typeof eventCreateSchema>;

export const eventsIngestSchema = z.object({
  events: z.array(eventCreateSchema).min(1),
});

/**
 * The same schema (same definition, same OpenAPI document) for the ingest route, whose `safeParse`
 * answers a body `acceptsIngestBody` vouches for without running zod over every event; any other
 * body is parsed by `eventsIngestSchema` itself.
 */
export const eventsIngestRequestSchema = z.object({
  events: z.array(eventCreateSchema).min(1),
});
eventsIngestRequestSchema.safeParse = ((input: unknown) =>
  acceptsIngestBody(input)
    ? { success: true, data: input as z.output<typeof eventsIngestSchema> }
    : eventsIngestSchema.safeParse(input)) as typeof eventsIngestRequestSchema.safeParse;

export const eventsIngestResponseSchema = z.object({ inserted: z.number().int() });

/** The SDK's Customer read model, as embedded in events. */
export const eventCustomerSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  metadata: metadataOutputSchema,
  external_id: z.string().nullable(),
  email: z.string(),
  email_verified: z.boolean(),
  name: z.string().nullable(),
  billing_address: z
    .object({
      line1: z.string().nullable(),
      line2: z.string().nullable(),
      postal_code: z.string().nullable(),
      city: z.string().nullable(),
      state: z.string().nullable(),
      country: z.string(),
    })
    .nullable(),
  tax_id: z.array(z.string().nullable()).nullable(),
  organization_id: z.uuid(),
  deleted_at: z.string().nullable(),
  avatar_url: z.string(),
});
export type EventCustomerRead = z.infer<typeof eventCustomerSchema>;

export const eventSchema = z.object({
  id: z.uuid(),
  timestamp: z.string(),
  name: z.string(),
  source: z.enum(EVENT_SOURCES),
  organization_id: z.uuid(),
  customer_id: z.uuid().nullable(),
  customer: eventCustomerSchema.nullable(),
  external_customer_id: z.string().nullable(),
  metadata: metadataOutputSchema,
});
export type EventRead = z.infer<typeof eventSchema>;

export const eventListSchema = listOf(eventSchema);

/** A customers row as the event queries select it. */
export interface CustomerRow {
  id: string;
  created_at: Date;
  modified_at: Date | null;
  metadata: Record<string, string | number | boolean>;
  external_id: string | null;
  email: string;
  email_verified: boolean;
  name: string | null;
  billing_address: BillingAddress | null;
  tax_id: [string, string | null] | null;
  organization_id: string;
  deleted_at?: Date | null;
}

/** An events row as the event queries select it. */
export interface EventRow {
  id: string;
  timestamp: Date;
  name: string;
  source: 'system' | 'user';
  organization_id: string;
  customer_id: string | null;
  external_customer_id: string | null;
  metadata: Record<string, string | number | boolean>;
}

const iso = (d: Date | string) => (d instanceof Date ? d : new Date(d)).toISOString();

/**
 * The customer embedded in an event: the SDK's Customer, built from a raw row. Same output as the
 * customers module's serializer (its avatar is the Gravatar URL of the e-mail's MD5); kept local so
 * event reads need no entity hydration.
 */
export function serializeEventCustomer(c: CustomerRow): EventCustomerRead {
  return {
    id: c.id,
    created_at: iso(c.created_at),
    modified_at: c.modified_at ? iso(c.modified_at) : null,
    metadata: c.metadata ?? {},
    external_id: c.external_id,
    email: c.email,
    email_verified: c.email_verified,
    name: c.name,
    billing_address: serializeBillingAddress(c.billing_address),
    tax_id: c.tax_id,
    organization_id: c.organization_id,
    deleted_at: c.deleted_at ? iso(c.deleted_at) : null,
    avatar_url: avatarUrl(c.email),
  };
}

export function serializeEvent(e: EventRow, customer: CustomerRow | null): EventRead {
  return {
    id: e.id,
    timestamp: iso(e.timestamp),
    name: e.name,
    source: e.source,
    organization_id: e.organization_id,
    customer_id: e.customer_id,
    customer: customer ? serializeEventCustomer(customer) : null,
    external_customer_id: e.external_customer_id,
    metadata: e.metadata ?? {},
  };
}
