/** Wire shapes of the OAuth2 provider (as the public Polar API): clients, authorize answers, grants. */
import { z } from 'zod/v4';
import { SCOPES } from '../../kit/scopes.ts';
import { OAUTH2_AUTH_METHODS, OAUTH2_SUB_TYPES, type OAuth2Client, type OAuth2Grant } from './entities.ts';

/** What a client may ask for: every scope except the console's own `web_default`. */
export const OAUTH2_SCOPES: readonly string[] = SCOPES.filter((s) => s !== 'web_default');
export const DEFAULT_CLIENT_SCOPE = OAUTH2_SCOPES.join(' ');

const uri = z.url({ protocol: /^https?$/ }).max(2048);

const scopeAlternatives = `(?:${OAUTH2_SCOPES.map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
/** Known scopes separated by spaces, as the document's pattern (the refinement below is the same rule). */
const SCOPE_LIST_PATTERN = `^ *(?:${scopeAlternatives}(?: +${scopeAlternatives})* *)?$`;

/** A space-separated scope list of known scopes, without duplicates. */
export const scopeString = z
  .string()
  .max(4096)
  .refine((v) => v.split(' ').filter(Boolean).every((s) => OAUTH2_SCOPES.includes(s)), { message: 'Unknown scope' })
  .transform((v) => [...new Set(v.split(' ').filter(Boolean))].join(' '))
  .meta({ pattern: SCOPE_LIST_PATTERN });

export const clientConfigurationSchema = z.object({
  redirect_uris: z.array(uri).min(1).max(20),
  token_endpoint_auth_method: z.enum(OAUTH2_AUTH_METHODS).default('client_secret_post'),
  grant_types: z
    .array(z.enum(['authorization_code', 'refresh_token']))
    .min(1)
    .default(['authorization_code', 'refresh_token'])
    .refine((g) => g.includes('authorization_code'), { message: 'authorization_code is required' }),
  response_types: z.array(z.literal('code')).min(1).default(['code']),
  scope: scopeString.default(DEFAULT_CLIENT_SCOPE),
  client_name: z.string().trim().min(1).max(255),
  client_uri: uri.nullish(),
  logo_uri: uri.nullish(),
  tos_uri: uri.nullish(),
  policy_uri: uri.nullish(),
});
export type ClientConfiguration = z.output<typeof clientConfigurationSchema>;

export const clientUpdateSchema = clientConfigurationSchema.extend({ client_id: z.string().max(128) });

export const clientSchema = z.object({
  redirect_uris: z.array(z.string()),
  token_endpoint_auth_method: z.enum(OAUTH2_AUTH_METHODS),
  grant_types: z.array(z.string()),
  response_types: z.array(z.string()),
  scope: z.string(),
  client_name: z.string(),
  client_uri: z.string().nullable(),
  logo_uri: z.string().nullable(),
  tos_uri: z.string().nullable(),
  policy_uri: z.string().nullable(),
  created_at: z.string(),
  modified_at: z.string().nullable(),
  client_id: z.string(),
  /** The secret itself only in the registration answer; empty afterwards (it is stored hashed). */
  client_secret: z.string(),
  client_id_issued_at: z.number().int(),
  client_secret_expires_at: z.number().int(),
});

export function serializeClient(c: OAuth2Client, secret = ''): z.infer<typeof clientSchema> {
  return {
    redirect_uris: c.redirectUris,
    token_endpoint_auth_method: c.tokenEndpointAuthMethod,
    grant_types: c.grantTypes,
    response_types: c.responseTypes,
    scope: c.scope,
    client_name: c.clientName,
    client_uri: c.clientUri ?? null,
    logo_uri: c.logoUri ?? null,
    tos_uri: c.tosUri ?? null,
    policy_uri: c.policyUri ?? null,
    created_at: c.createdAt.toISOString(),
    modified_at: c.modifiedAt?.toISOString() ?? null,
    client_id: c.clientId,
    client_secret: secret,
    client_id_issued_at: c.clientIdIssuedAt,
    client_secret_expires_at: c.clientSecretExpiresAt,
  };
}

export const clientPublicSchema = z.object({
  created_at: z.string(),
  modified_at: z.string().nullable(),
  client_id: z.string(),
  client_name: z.string().nullable(),
  client_uri: z.string().nullable(),
  logo_uri: z.string().nullable(),
  tos_uri: z.string().nullable(),
  policy_uri: z.string().nullable(),
});

export function serializeClientPublic(c: OAuth2Client): z.infer<typeof clientPublicSchema> {
  return {
    created_at: c.createdAt.toISOString(),
    modified_at: c.modifiedAt?.toISOString() ?? null,
    client_id: c.clientId,
    client_name: c.clientName,
    client_uri: c.clientUri ?? null,
    logo_uri: c.logoUri ?? null,
    tos_uri: c.tosUri ?? null,
    policy_uri: c.policyUri ?? null,
  };
}

/** The authorization request, as the consent page passes it on from its own address. */
export const authorizeQuery = z.object({
  client_id: z.string().min(1).max(128),
  redirect_uri: z.string().max(2048).optional(),
  response_type: z.string().max(64).optional(),
  scope: z.string().max(4096).optional(),
  state: z.string().max(2048).optional(),
  code_challenge: z.string().max(256).optional(),
  code_challenge_method: z.string().max(16).optional(),
  nonce: z.string().max(1024).optional(),
  sub_type: z.enum(OAUTH2_SUB_TYPES).default('user'),
  prompt: z.string().max(64).optional(),
  response_mode: z.string().max(32).optional(),
});
export type AuthorizeQuery = z.output<typeof authorizeQuery>;

export const consentBody = authorizeQuery.extend({
  action: z.enum(['allow', 'deny']),
  /** The organization an organization subject acts for. */
  sub: z.uuid().nullish(),
});

const authorizeOrganization = z.object({ id: z.uuid(), slug: z.string(), avatar_url: z.string().nullable() });
export const authorizeResponseSchema = z.object({
  client: clientPublicSchema,
  sub_type: z.enum(OAUTH2_SUB_TYPES),
  sub: z.union([z.object({ id: z.uuid(), email: z.string(), avatar_url: z.string().nullable() }), authorizeOrganization]).nullable(),
  scopes: z.array(z.string()),
  organizations: z.array(authorizeOrganization).optional(),
});

export const grantSchema = z.object({
  id: z.uuid(),
  created_at: z.string(),
  client: clientPublicSchema,
  sub_type: z.enum(OAUTH2_SUB_TYPES),
  organization_id: z.uuid().nullable(),
  scopes: z.array(z.string()),
});

export function serializeGrant(g: OAuth2Grant): z.infer<typeof grantSchema> {
  return {
    id: g.id,
    created_at: g.createdAt.toISOString(),
    client: serializeClientPublic(g.client as OAuth2Client),
    sub_type: g.subType,
    organization_id: g.organization?.id ?? null,
    scopes: g.scopes,
  };
}
