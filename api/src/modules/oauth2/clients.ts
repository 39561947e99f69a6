/**
 * OAuth2 clients a user registers (RFC 7591/7592 shapes) and the grants they approved, on the
 * caller's transaction.
 */
import type { EntityManager } from '../../kit/db.ts';
import { fieldError, ResourceNotFound } from '../../kit/errors.ts';
import { sha256Hex } from '../../kit/crypto.ts';
import { User } from '../../auth/entities.ts';
import { OAuth2Client, OAuth2Grant } from './entities.ts';
import { serializeClient, type ClientConfiguration } from './schemas.ts';
import { newClientCredentials, redirectUriProblem, revokeGrant } from './service.ts';

function checkRedirectUris(body: ClientConfiguration) {
  body.redirect_uris.forEach((uri, i) => {
    const problem = redirectUriProblem(uri);
    if (problem) throw fieldError(['body', 'redirect_uris', i], problem, 'value_error', uri);
  });
}

function applyConfiguration(c: OAuth2Client, body: ClientConfiguration) {
  c.redirectUris = body.redirect_uris;
  c.grantTypes = body.grant_types;
  c.responseTypes = body.response_types;
  c.scope = body.scope;
  c.clientName = body.client_name;
  c.clientUri = body.client_uri ?? null;
  c.logoUri = body.logo_uri ?? null;
  c.tosUri = body.tos_uri ?? null;
  c.policyUri = body.policy_uri ?? null;
}

/** A live client the user registered; 404 otherwise. */
export async function ownClient(em: EntityManager, userId: string, clientId: string): Promise<OAuth2Client> {
  const c = await em.findOne(OAuth2Client, { clientId, deletedAt: null, user: userId });
  if (!c) throw ResourceNotFound('OAuth2 client not found');
  return c;
}

/** Registers a client; its secret (none for a public client) is answered only here. */
export async function registerClient(tx: EntityManager, userId: string, body: ClientConfiguration) {
  checkRedirectUris(body);
  const { clientId, secret } = newClientCredentials(body.token_endpoint_auth_method);
  const c = tx.create(OAuth2Client, {
    user: tx.getReference(User, userId),
    clientId,
    clientSecretHash: secret ? sha256Hex(secret) : null,
    clientIdIssuedAt: Math.floor(Date.now() / 1000),
    clientSecretExpiresAt: 0,
    tokenEndpointAuthMethod: body.token_endpoint_auth_method,
    redirectUris: [],
    grantTypes: [],
    responseTypes: [],
    scope: '',
    clientName: '',
  });
  applyConfiguration(c, body);
  await tx.flush();
  return serializeClient(c, secret ?? '');
}

/** Replaces a client's configuration; its id and authentication method never change. */
export async function updateClient(tx: EntityManager, userId: string, clientId: string, body: ClientConfiguration & { client_id: string }) {
  const c = await ownClient(tx, userId, clientId);
  if (body.client_id !== c.clientId) throw fieldError(['body', 'client_id'], 'Does not match the client being updated', 'value_error', body.client_id);
  if (body.token_endpoint_auth_method !== c.tokenEndpointAuthMethod) {
    throw fieldError(['body', 'token_endpoint_auth_method'], 'The authentication method of a client cannot change', 'value_error');
  }
  checkRedirectUris(body);
  applyConfiguration(c, body);
  await tx.flush();
  return serializeClient(c);
}

/** Deletes a client; every grant (and so every token) it holds is revoked. Answers the deleted client. */
export async function deleteClient(tx: EntityManager, userId: string, clientId: string) {
  const c = await ownClient(tx, userId, clientId);
  c.deletedAt = new Date();
  await tx.flush();
  const grants = await tx.find(OAuth2Grant, { client: c.id, revokedAt: null }, { fields: ['id'] });
  for (const g of grants) await revokeGrant(tx, g.id);
  return serializeClient(c);
}

/** Revokes one of the user's live grants (every token of that authorization); 404 otherwise. */
export async function revokeUserGrant(tx: EntityManager, userId: string, id: string): Promise<void> {
  const g = await tx.findOne(OAuth2Grant, { id, user: userId, revokedAt: null });
  if (!g) throw ResourceNotFound('Grant not found');
  await revokeGrant(tx, g.id);
}
