/**
 * The OAuth2 / OpenID Connect authorization server's tables: registered clients, authorization codes,
 * grants (one per approval: the refresh-token family), the tokens issued under a grant, and the RS256
 * signing keys of id tokens. Secrets, codes and tokens are stored only as SHA-256 hashes; private keys
 * are sealed (kit/secretbox.ts).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../../kit/entity.ts';
import { User } from '../../auth/entities.ts';
import { Organization } from '../organizations/entities.ts';

export const OAUTH2_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const;
export const OAUTH2_SUB_TYPES = ['user', 'organization'] as const;
export type OAuth2SubType = (typeof OAUTH2_SUB_TYPES)[number];

export const OAuth2Client = defineEntity({
  name: 'OAuth2Client',
  tableName: 'oauth2_clients',
  properties: {
    ...baseProperties,
    /** The user who registered the client and manages it. */
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    clientId: p.string().unique(),
    clientSecretHash: p.string().nullable().hidden(),
    clientIdIssuedAt: p.integer(),
    clientSecretExpiresAt: p.integer().default(0),
    redirectUris: p.array(),
    tokenEndpointAuthMethod: p.enum(OAUTH2_AUTH_METHODS),
    grantTypes: p.array(),
    responseTypes: p.array(),
    scope: p.text(),
    clientName: p.string(),
    clientUri: p.text().nullable(),
    logoUri: p.text().nullable(),
    tosUri: p.text().nullable(),
    policyUri: p.text().nullable(),
    deletedAt: p.datetime().nullable(),
  },
});
export type OAuth2Client = InferEntity<typeof OAuth2Client>;

/** What a user approved for a client: the subject, the scopes. Its tokens form one refresh-token family. */
export const OAuth2Grant = defineEntity({
  name: 'OAuth2Grant',
  tableName: 'oauth2_grants',
  properties: {
    ...baseProperties,
    client: () => p.manyToOne(OAuth2Client).deleteRule('cascade').index(),
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    subType: p.enum(OAUTH2_SUB_TYPES),
    organization: () => p.manyToOne(Organization).nullable().deleteRule('cascade'),
    scopes: p.array(),
    nonce: p.text().nullable(),
    authTime: p.datetime(),
    revokedAt: p.datetime().nullable(),
  },
});
export type OAuth2Grant = InferEntity<typeof OAuth2Grant>;

/** Single-use, 10 minutes, bound to client, redirect URI and PKCE challenge; used once it names its grant. */
export const OAuth2AuthorizationCode = defineEntity({
  name: 'OAuth2AuthorizationCode',
  tableName: 'oauth2_authorization_codes',
  properties: {
    ...baseProperties,
    codeHash: p.string().unique().hidden(),
    client: () => p.manyToOne(OAuth2Client).deleteRule('cascade').index(),
    user: () => p.manyToOne(User).deleteRule('cascade'),
    subType: p.enum(OAUTH2_SUB_TYPES),
    organization: () => p.manyToOne(Organization).nullable().deleteRule('cascade'),
    scopes: p.array(),
    /** As the authorization request named it; empty when it named none (then optional at the token endpoint). */
    redirectUri: p.text(),
    codeChallenge: p.string().nullable(),
    nonce: p.text().nullable(),
    expiresAt: p.datetime(),
    usedAt: p.datetime().nullable(),
    grant: () => p.manyToOne(OAuth2Grant).nullable().deleteRule('cascade'),
  },
});
export type OAuth2AuthorizationCode = InferEntity<typeof OAuth2AuthorizationCode>;

/** One access token and its refresh token. A refresh token is good once: using it rotates to a new row. */
export const OAuth2Token = defineEntity({
  name: 'OAuth2Token',
  tableName: 'oauth2_tokens',
  properties: {
    ...baseProperties,
    grant: () => p.manyToOne(OAuth2Grant).deleteRule('cascade').index(),
    accessTokenHash: p.string().unique().hidden(),
    refreshTokenHash: p.string().nullable().unique().hidden(),
    scopes: p.array(),
    accessExpiresAt: p.datetime(),
    refreshExpiresAt: p.datetime().nullable(),
    refreshUsedAt: p.datetime().nullable(),
    /** The access token was revoked (its refresh token stays good unless the grant is revoked). */
    revokedAt: p.datetime().nullable(),
  },
});
export type OAuth2Token = InferEntity<typeof OAuth2Token>;

/** RS256 keys of id tokens: the newest signs, older ones stay published until retired. */
export const OAuth2SigningKey = defineEntity({
  name: 'OAuth2SigningKey',
  tableName: 'oauth2_signing_keys',
  properties: {
    ...baseProperties,
    kid: p.string().unique(),
    privateKeySealed: p.text().hidden(),
    publicJwk: p.json<Record<string, unknown>>(),
    retiredAt: p.datetime().nullable(),
  },
});
export type OAuth2SigningKey = InferEntity<typeof OAuth2SigningKey>;

export const oauth2Entities = [OAuth2Client, OAuth2Grant, OAuth2AuthorizationCode, OAuth2Token, OAuth2SigningKey];
