/**
 * /v1/oauth2: client registration (RFC 7591/7592 shapes), the authorization request the consent page
 * shows and its approval, the token endpoint, introspection (RFC 7662), revocation (RFC 7009),
 * userinfo; the grants a user approved; and OpenID Connect discovery and JWKS at the API's origin.
 */
import { z } from 'zod/v4';
import type { Request, Response } from 'express';
import { fieldError, NotPermitted } from '../../kit/errors.ts';
import { paginated, paginationQuery, pageOffset } from '../../kit/pagination.ts';
import { registerBearerResolver, type Principal } from '../../kit/principals.ts';
import { route } from '../../kit/routes.ts';
import { findAndCountInOneSnapshot, type EntityManager } from '../../kit/db.ts';
import { deleteRoute, listOf, transact } from '../../kit/route-helpers.ts';
import { User } from '../../auth/entities.ts';
import { OAuth2Client, OAuth2Grant } from './entities.ts';
import {
  authorizeQuery,
  authorizeResponseSchema,
  clientConfigurationSchema,
  clientSchema,
  clientUpdateSchema,
  consentBody,
  grantSchema,
  OAUTH2_SCOPES,
  serializeClient,
  serializeClientPublic,
  serializeGrant,
} from './schemas.ts';
import {
  ACCESS_TOKEN_PREFIX,
  authenticateClient,
  clientRedirect,
  exchangeCode,
  formParams,
  introspect,
  issueCode,
  issuerOf,
  jwks,
  OAuthError,
  organizationsOf,
  refresh,
  resolveAccessToken,
  revoke,
  userInfo,
  validateAuthorizeRequest,
} from './service.ts';
import { deleteClient, ownClient, registerClient, revokeUserGrant, updateClient } from './clients.ts';

registerBearerResolver(ACCESS_TOKEN_PREFIX, resolveAccessToken);

const userOnly = { kinds: ['user'] as Principal['kind'][] };
const tags = ['oauth2'];
const clientIdParams = z.object({ client_id: z.string().max(128) });
const userIdOf = (p: Principal) => (p.kind === 'user' ? p.userId : '');

/** OAuth endpoints answer errors in the RFC 6749 shape and are never cached. */
async function oauthEndpoint(res: Response, work: () => Promise<unknown>): Promise<unknown> {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Pragma', 'no-cache');
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    if (err.status === 401) res.setHeader('WWW-Authenticate', 'Basic realm="oauth2"');
    res.status(err.status).json(err.toJSON());
    return undefined;
  }
}

/**
 * A form-encoded endpoint of an authenticated client (token, introspection, revocation). No enclosing
 * transaction: a reused code or refresh token revokes its grant, and that must stay committed while
 * the request answers invalid_grant; each service step commits on its own.
 */
function clientEndpoint(
  { req, res, em }: { req: Request; res: Response; em: EntityManager },
  work: (client: OAuth2Client, form: Record<string, string>) => Promise<unknown>,
): Promise<unknown> {
  return oauthEndpoint(res, async () => {
    const form = await formParams(req);
    return work(await authenticateClient(em, req, form), form);
  });
}

export const routes = [
  // ------------------------------------------------------------------ registration
  route({
    method: 'post',
    path: '/v1/oauth2/register',
    summary: 'Register an OAuth2 client (its secret is shown only in this answer)',
    tags,
    auth: userOnly,
    body: clientConfigurationSchema,
    // 200 as Polar answers it (its SDK accepts nothing else), not RFC 7591's 201.
    response: clientSchema,
    handler: ({ body, principal, em }) => transact(em, (tx) => registerClient(tx, userIdOf(principal), body)),
  }),
  route({
    method: 'get',
    path: '/v1/oauth2/',
    summary: "List the signed-in user's OAuth2 clients",
    tags,
    auth: userOnly,
    query: z.object({ ...paginationQuery }),
    response: listOf(clientSchema),
    async handler({ query, principal, em }) {
      const [items, total] = await findAndCountInOneSnapshot(
        em,
        OAuth2Client,
        { user: userIdOf(principal), deletedAt: null },
        { orderBy: { createdAt: 'desc', id: 'asc' }, ...pageOffset(query) },
      );
      return paginated(items.map((c) => serializeClient(c)), total, query);
    },
  }),
  route({
    method: 'get',
    path: '/v1/oauth2/register/:client_id',
    summary: 'Get an OAuth2 client',
    tags,
    auth: userOnly,
    params: clientIdParams,
    response: clientSchema,
    handler: async ({ params, principal, em }) => serializeClient(await ownClient(em, userIdOf(principal), params.client_id)),
  }),
  route({
    method: 'put',
    path: '/v1/oauth2/register/:client_id',
    summary: 'Update an OAuth2 client',
    tags,
    auth: userOnly,
    params: clientIdParams,
    body: clientUpdateSchema,
    response: clientSchema,
    handler: ({ params, body, principal, em }) => transact(em, (tx) => updateClient(tx, userIdOf(principal), params.client_id, body)),
  }),
  route({
    method: 'delete',
    path: '/v1/oauth2/register/:client_id',
    summary: 'Delete an OAuth2 client; every token it holds stops working (answers the deleted client, as Polar does)',
    tags,
    auth: userOnly,
    params: clientIdParams,
    response: clientSchema,
    handler: ({ params, principal, em }) => transact(em, (tx) => deleteClient(tx, userIdOf(principal), params.client_id)),
  }),

  // ------------------------------------------------------------------ authorization
  route({
    method: 'get',
    path: '/v1/oauth2/authorize',
    summary: 'Check an authorization request and describe it for the consent page',
    tags,
    auth: userOnly,
    query: authorizeQuery,
    response: authorizeResponseSchema,
    errors: [400],
    async handler({ query, principal, em, res }) {
      return oauthEndpoint(res, async () => {
        const r = await validateAuthorizeRequest(em, query);
        const client = serializeClientPublic(r.client);
        if (r.subType === 'organization') {
          const orgs = await organizationsOf(em, userIdOf(principal));
          return {
            client,
            sub_type: 'organization',
            sub: null,
            scopes: r.scopes,
            organizations: orgs.map((o) => ({ id: o.id, slug: o.slug, avatar_url: o.avatarUrl ?? null })),
          };
        }
        const user = await em.findOneOrFail(User, { id: userIdOf(principal) });
        return { client, sub_type: 'user', sub: { id: user.id, email: user.email, avatar_url: user.image ?? null }, scopes: r.scopes };
      });
    },
  }),
  route({
    method: 'post',
    path: '/v1/oauth2/consent',
    summary: "Approve or deny an authorization request; answers where to send the user's browser",
    tags,
    auth: userOnly,
    body: consentBody,
    response: z.object({ redirect_to: z.string() }),
    errors: [400],
    async handler({ body, principal, em, res, deps }) {
      return oauthEndpoint(res, async () => {
        const r = await validateAuthorizeRequest(em, body);
        if (body.action === 'deny') {
          return { redirect_to: clientRedirect(deps.cfg, r.redirectUri, { error: 'access_denied', error_description: 'The user denied the request', state: r.state }) };
        }
        let organizationId: string | null = null;
        if (r.subType === 'organization') {
          const orgs = await organizationsOf(em, userIdOf(principal));
          if (!body.sub) throw fieldError(['body', 'sub'], 'Choose the organization the application acts for', 'missing');
          if (!orgs.some((o) => o.id === body.sub)) throw fieldError(['body', 'sub'], 'Organization not found.', 'value_error', body.sub);
          organizationId = body.sub;
        }
        const code = await issueCode(em, r, userIdOf(principal), organizationId);
        return { redirect_to: clientRedirect(deps.cfg, r.redirectUri, { code, state: r.state }) };
      });
    },
  }),

  // ------------------------------------------------------------------ token, introspection, revocation
  route({
    method: 'post',
    path: '/v1/oauth2/token',
    summary: 'Exchange an authorization code or a refresh token (form-encoded; client authentication)',
    tags,
    auth: 'public',
    errors: [400, 401],
    handler: ({ deps, ...ctx }) =>
      clientEndpoint(ctx, (client, form) => {
        if (form.grant_type === 'authorization_code') return exchangeCode(ctx.em, deps.cfg, client, form);
        if (form.grant_type === 'refresh_token') return refresh(ctx.em, deps.cfg, client, form);
        throw new OAuthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
      }),
  }),
  route({
    method: 'post',
    path: '/v1/oauth2/introspect',
    summary: "Describe one of the client's tokens (RFC 7662; form-encoded; client authentication)",
    tags,
    auth: 'public',
    errors: [400, 401],
    handler: ({ deps, ...ctx }) => clientEndpoint(ctx, (client, form) => introspect(ctx.em, deps.cfg, client, form)),
  }),
  route({
    method: 'post',
    path: '/v1/oauth2/revoke',
    summary: "Revoke one of the client's tokens (RFC 7009; form-encoded; client authentication)",
    tags,
    auth: 'public',
    errors: [400, 401],
    handler: (ctx) =>
      clientEndpoint(ctx, async (client, form) => {
        if (!form.token) throw new OAuthError(400, 'invalid_request', 'token is required');
        await revoke(ctx.em, client, form);
        return {};
      }),
  }),
  route({
    method: 'get',
    path: '/v1/oauth2/userinfo',
    summary: 'Claims about the subject of an OAuth2 access token (by its scopes)',
    tags,
    auth: { kinds: ['oauth2'], scopes: ['openid'] },
    response: z.object({ sub: z.string(), name: z.string().nullable().optional(), email: z.string().optional(), email_verified: z.boolean().optional() }),
    async handler({ principal, em }) {
      if (principal.kind !== 'oauth2') throw NotPermitted();
      return userInfo(em, principal);
    },
  }),

  // ------------------------------------------------------------------ authorized apps
  route({
    method: 'get',
    path: '/v1/oauth2/grants',
    summary: 'Applications the signed-in user authorized (live grants)',
    tags,
    auth: userOnly,
    query: z.object({ ...paginationQuery }),
    response: listOf(grantSchema),
    async handler({ query, principal, em }) {
      const [items, total] = await findAndCountInOneSnapshot(
        em,
        OAuth2Grant,
        { user: userIdOf(principal), revokedAt: null, client: { deletedAt: null } },
        { populate: ['client'], orderBy: { createdAt: 'desc', id: 'asc' }, ...pageOffset(query) },
      );
      return paginated(items.map(serializeGrant), total, query);
    },
  }),
  deleteRoute({
    path: '/v1/oauth2/grants/:id',
    summary: "Revoke an application's access (every token of that authorization)",
    tags,
    auth: userOnly,
    remove: (tx, { params, principal }) => revokeUserGrant(tx, userIdOf(principal), params.id),
  }),

  // ------------------------------------------------------------------ discovery
  route({
    method: 'get',
    path: '/.well-known/openid-configuration',
    summary: 'OpenID Connect discovery document',
    tags,
    auth: 'public',
    async handler({ deps }) {
      const iss = issuerOf(deps.cfg);
      return {
        issuer: iss,
        authorization_endpoint: `${iss}/dashboard/oauth2/authorize`,
        token_endpoint: `${iss}/v1/oauth2/token`,
        userinfo_endpoint: `${iss}/v1/oauth2/userinfo`,
        jwks_uri: `${iss}/.well-known/jwks.json`,
        registration_endpoint: `${iss}/v1/oauth2/register`,
        introspection_endpoint: `${iss}/v1/oauth2/introspect`,
        revocation_endpoint: `${iss}/v1/oauth2/revoke`,
        scopes_supported: OAUTH2_SCOPES,
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
        code_challenge_methods_supported: ['S256'],
        claims_supported: ['sub', 'name', 'email', 'email_verified', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce'],
        authorization_response_iss_parameter_supported: true,
        service_documentation: `${iss}/docs`,
      };
    },
  }),
  route({
    method: 'get',
    path: '/.well-known/jwks.json',
    summary: 'Public keys of id-token signatures (JWKS)',
    tags,
    auth: 'public',
    async handler({ em, deps }) {
      return jwks(em, deps.cfg);
    },
  }),
];
