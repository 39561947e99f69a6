/** Webhook endpoints as the seller manages them, and redelivery of an event; on the caller's transaction. */
import { webhookAllowsPrivateUrls, type Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { fieldError, ResourceNotFound } from '../../kit/errors.ts';
import type { Principal } from '../../kit/principals.ts';
import type { AfterCommit } from '../../kit/route-helpers.ts';
import { Organization } from '../organizations/entities.ts';
import { resolveWriteOrganization, visibleOrganizationIds } from '../organizations/scope.ts';
import { refusedWebhookUrl } from './addresses.ts';
import { WebhookEndpoint, WebhookEvent } from './entities.ts';
import { endpointSecret, markRetriesStarted, newWebhookSecret, sealSecret, startRetries } from './fan-out.ts';
import { serializeEndpoint, type EndpointCreate, type EndpointUpdate } from './schemas.ts';

/** 422 on `body.url` unless the configuration allows it (addresses.ts). */
function checkUrl(cfg: Config, url: string | undefined) {
  if (url === undefined) return;
  const refused = refusedWebhookUrl(url, webhookAllowsPrivateUrls(cfg));
  if (refused) throw fieldError(['body', 'url'], refused);
}

/** A live endpoint the principal can see; 404 otherwise. */
export async function findVisibleEndpoint(em: EntityManager, principal: Principal, id: string): Promise<WebhookEndpoint> {
  const orgIds = await visibleOrganizationIds(em, principal);
  const endpoint = await em.findOne(WebhookEndpoint, { id, organization: { $in: orgIds }, deletedAt: null });
  if (!endpoint) throw ResourceNotFound('Webhook endpoint not found');
  return endpoint;
}

/** The endpoint's read model with its signing secret. */
export const readEndpoint = (cfg: Config, e: WebhookEndpoint) => serializeEndpoint(e, endpointSecret(cfg, e));

/** Creates an endpoint; the signing secret is generated unless given. */
export async function createEndpoint(tx: EntityManager, cfg: Config, principal: Principal, input: EndpointCreate) {
  checkUrl(cfg, input.url);
  const orgId = await resolveWriteOrganization(tx, principal, input.organization_id);
  const secret = input.secret ?? newWebhookSecret();
  const endpoint = tx.create(WebhookEndpoint, {
    organization: tx.getReference(Organization, orgId),
    url: input.url,
    format: input.format,
    secretSealed: sealSecret(cfg, secret),
    events: [...new Set(input.events)],
    enabled: true,
    disabledAt: null,
    deletedAt: null,
  });
  await tx.flush();
  return serializeEndpoint(endpoint, secret);
}

/** Applies a PATCH (`enabled: true` re-enables a disabled endpoint). */
export async function updateEndpoint(tx: EntityManager, cfg: Config, principal: Principal, id: string, input: EndpointUpdate) {
  const e = await findVisibleEndpoint(tx, principal, id);
  checkUrl(cfg, input.url);
  if (input.url !== undefined) e.url = input.url;
  if (input.format !== undefined) e.format = input.format;
  if (input.events !== undefined) e.events = [...new Set(input.events)];
  if (input.secret !== undefined) e.secretSealed = sealSecret(cfg, input.secret);
  if (input.enabled !== undefined) {
    e.enabled = input.enabled;
    e.disabledAt = input.enabled ? null : new Date();
  }
  await tx.flush();
  return readEndpoint(cfg, e);
}

export async function deleteEndpoint(tx: EntityManager, principal: Principal, id: string): Promise<void> {
  const e = await findVisibleEndpoint(tx, principal, id);
  e.deletedAt = new Date();
  e.enabled = false;
  await tx.flush();
}

/**
 * Delivers an event again (same webhook-id, new attempts). The reset is committed first: the retry
 * workflow reads the row. A start lost after the commit is found by the dispatcher's sweep (an
 * attempted event with no retry workflow) and started then. An event not attempted yet is left to
 * the dispatcher.
 */
export async function redeliverEvent(tx: EntityManager, afterCommit: AfterCommit, deps: Deps, principal: Principal, id: string): Promise<void> {
  const orgIds = await visibleOrganizationIds(tx, principal);
  const we = await tx.findOne(WebhookEvent, { id, endpoint: { organization: { $in: orgIds }, deletedAt: null } }, { populate: ['endpoint'] });
  if (!we) throw ResourceNotFound('Webhook event not found');
  we.succeeded = null;
  we.retryStartedAt = null;
  await tx.flush();
  if (we.attempts === 0) return;
  const input = {
    webhookEventId: we.id,
    outboxEventId: we.outboxEvent.id,
    endpointId: we.endpoint.id,
    firstAttempt: 1,
    organizationId: we.endpoint.organization.id,
    url: we.endpoint.url,
    eventType: we.type,
  };
  afterCommit(async () => {
    const started = await startRetries(deps.temporal, deps.cfg, deps.cfg.TEMPORAL_TASK_QUEUE, input, { redeliver: true, log: deps.log });
    if (started) await markRetriesStarted(tx.fork(), [we.id]);
  });
}
