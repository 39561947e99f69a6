/** Wire shapes of webhook endpoints, events and deliveries (as the public Polar API). */
import { z } from 'zod/v4';
import { WEBHOOK_EVENT_TYPES } from './outbox.ts';
import { WEBHOOK_FORMATS, type WebhookDelivery, type WebhookEndpoint, type WebhookEvent } from './entities.ts';

/**
 * The shape of a webhook URL; whether its scheme and host are allowed depends on the configuration
 * (`refusedWebhookUrl`, checked by the routes).
 */
export const webhookUrl = z.url({ protocol: /^https?$/ }).max(2048);

export const eventTypesSchema = z.array(z.enum(WEBHOOK_EVENT_TYPES)).max(WEBHOOK_EVENT_TYPES.length);

export const endpointCreateSchema = z.object({
  url: webhookUrl,
  format: z.enum(WEBHOOK_FORMATS).default('raw'),
  secret: z.string().min(32).max(256).optional(),
  events: eventTypesSchema.default([]),
  organization_id: z.uuid().nullish(),
});

export const endpointUpdateSchema = z.object({
  url: webhookUrl.optional(),
  format: z.enum(WEBHOOK_FORMATS).optional(),
  secret: z.string().min(32).max(256).optional(),
  events: eventTypesSchema.optional(),
  enabled: z.boolean().optional(),
});
export type EndpointCreate = z.output<typeof endpointCreateSchema>;
export type EndpointUpdate = z.output<typeof endpointUpdateSchema>;

export const endpointSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  url: z.string(),
  format: z.enum(WEBHOOK_FORMATS),
  secret: z.string(),
  organization_id: z.uuid(),
  events: z.array(z.string()),
  enabled: z.boolean(),
});

export function serializeEndpoint(e: WebhookEndpoint, secret: string): z.infer<typeof endpointSchema> {
  return {
    id: e.id,
    created_at: e.createdAt.toISOString(),
    modified_at: e.modifiedAt?.toISOString() ?? null,
    url: e.url,
    format: e.format,
    secret,
    organization_id: e.organization.id,
    events: e.events,
    enabled: e.enabled,
  };
}

export const webhookEventSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  last_http_code: z.number().int().nullable(),
  succeeded: z.boolean().nullable(),
  type: z.string(),
  payload: z.string(),
});

export function serializeWebhookEvent(e: WebhookEvent): z.infer<typeof webhookEventSchema> {
  return {
    id: e.id,
    created_at: e.createdAt.toISOString(),
    modified_at: e.modifiedAt?.toISOString() ?? null,
    last_http_code: e.lastHttpCode ?? null,
    succeeded: e.succeeded ?? null,
    type: e.type,
    payload: e.payload,
  };
}

export const deliverySchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  succeeded: z.boolean(),
  http_code: z.number().int().nullable(),
  response: z.string().nullable(),
  duration_ms: z.number().int(),
  attempt: z.number().int(),
  webhook_event: webhookEventSchema,
});

export function serializeDelivery(d: WebhookDelivery): z.infer<typeof deliverySchema> {
  return {
    id: d.id,
    created_at: d.createdAt.toISOString(),
    modified_at: d.modifiedAt?.toISOString() ?? null,
    succeeded: d.succeeded,
    http_code: d.httpCode ?? null,
    response: d.response ?? null,
    duration_ms: d.durationMs,
    attempt: d.attempt,
    webhook_event: serializeWebhookEvent(d.webhookEvent),
  };
}
