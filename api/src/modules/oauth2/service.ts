// Over 400 lines: the authorization server's rules read as one flow (authorize, code, token, refresh, revoke).
/**
 * The authorization server's rules: client authentication, redirect URI matching (RFC 8252 loopback
 * ports), authorization requests, codes (single-use, 10 minutes, PKCE), token issue and refresh
 * rotation with family revocation, introspection, revocation, and the RS256 id-token keys.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { exportJWK, generateKeyPair, importJWK, SignJWT, type JWK } from 'jose';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { constantTimeEqual, randomToken, sha256Hex } from '../../kit/crypto.ts';
import { open, seal } from '../../kit/secretbox.ts';
import type { Principal } from '../../kit/principals.ts';
import { User } from '../../auth/entities.ts';
import { Member, Organization } from '../organizations/entities.ts';
import {
  OAuth2AuthorizationCode,
  OAuth2Client,
  OAuth2Grant,
  OAuth2SigningKey,
  OAuth2Token,
  type OAuth2SubType,
} from './entities.ts';
import { OAUTH2_SCOPES, type AuthorizeQuery } from './schemas.ts';

export const CLIENT_ID_PREFIX = 'polar_ci_';
export const CLIENT_SECRET_PREFIX = 'polar_cs_';
export const ACCESS_TOKEN_PREFIX = 'polar_at_';
export const REFRESH_TOKEN_PREFIX = 'polar_rt_';
export const CODE_PREFIX = 'polar_ac_';
export const CODE_TTL_MS = 10 * 60_000;
const KEY_PURPOSE = 'oauth2-signing-key';

/** An OAuth2 error in the RFC 6749 shape: `{"error": "invalid_grant", "error_description": "...", "detail": "..."}`. */
export class OAuthError extends Error {
  constructor(
    public readonly status: number,
    public readonly error: string,
    public readonly description: string,
  ) {
    super(description);
  }
  /** `detail` repeats the description: the shape every other /v1 error has (and the OpenAPI document states). */
  toJSON() {
    return { error: this.error, error_description: this.description, detail: this.description };
  }
}

export const issuerOf = (cfg: Pick<Config, 'PUBLIC_URL'>) => cfg.PUBLIC_URL.replace(/\/+$/, '');
const nowSeconds = (d = new Date()) => Math.floor(d.getTime() / 1000);

// ---------------------------------------------------------------------------------------------
// Clients

export function newClientCredentials(authMethod: string): { clientId: string; secret: string | null } {
  return {
    clientId: randomToken(CLIENT_ID_PREFIX, 18),
    secret: authMethod === 'none' ? null : randomToken(CLIENT_SECRET_PREFIX, 32),
  };
}

/** A registered redirect URI: https, or http on a loopback address; no fragment. */
export function redirectUriProblem(uri: string): string | null {
  const u = new URL(uri);
  if (u.hash) return 'Redirect URIs must not contain a fragment';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && isLoopback(u.hostname)) return null;
  return 'Redirect URIs must use https (http only on a loopback address)';
}

function isLoopback(hostname: string): boolean {
  return hostname === '127.0.0.1' || hostname === '[::1]' || hostname === 'localhost';
}

/** Exact match, except that a loopback redirect URI may come back on any port (RFC 8252 section 7.3). */
export function matchesRedirectUri(registered: string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  let r: URL;
  try {
    r = new URL(requested);
  } catch {
    return false;
  }
  if (r.protocol !== 'http:' || !isLoopback(r.hostname)) return false;
  return registered.some((uri) => {
    const g = new URL(uri);
    return g.protocol === 'http:' && g.hostname === r.hostname && g.pathname === r.pathname && g.search === r.search && r.hash === '';
  });
}

export async function liveClient(em: EntityManager, clientId: string): Promise<OAuth2Client | null> {
  return em.findOne(OAuth2Client, { clientId, deletedAt: null });
}

const FORM_LIMIT = 64 * 1024;

async function readBody(req: Request): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > FORM_LIMIT) throw new OAuthError(413, 'invalid_request', 'Request body is too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The fields of a form-encoded body (read here: the application parses only JSON). Each parameter
 * is given once; a repeated one is an invalid request.
 */
export async function formParams(req: Request): Promise<Record<string, string>> {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError(400, 'invalid_request', 'The request body must be application/x-www-form-urlencoded');
  }
  const entries: [string, string][] =
    req.body && typeof req.body === 'object'
      ? Object.entries(req.body as Record<string, unknown>).map(([k, v]) => {
          if (typeof v !== 'string') throw new OAuthError(400, 'invalid_request', `Parameter ${k} must be given once`);
          return [k, v];
        })
      : [...new URLSearchParams(await readBody(req))];
  const out: Record<string, string> = {};
  for (const [k, v] of entries) {
    if (k in out) throw new OAuthError(400, 'invalid_request', `Parameter ${k} must be given once`);
    if (v.includes('\u0000')) throw new OAuthError(400, 'invalid_request', `Parameter ${k} is malformed`);
    out[k] = v;
  }
  return out;
}

const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));

/**
 * The calling client, authenticated as it registered: HTTP Basic (`client_secret_basic`), secret in
 * the body (`client_secret_post`) or, for a public client (`none`), its id alone.
 */
export async function authenticateClient(em: EntityManager, req: Request, form: Record<string, string>): Promise<OAuth2Client> {
  let clientId = form.client_id;
  let secret = form.client_secret;
  let method: 'client_secret_basic' | 'client_secret_post' | 'none' = secret ? 'client_secret_post' : 'none';
  const header = req.headers.authorization;
  if (header && /^basic\s/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, ''), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 0 || secret) throw new OAuthError(401, 'invalid_client', 'Malformed client credentials');
    try {
      clientId = formDecode(decoded.slice(0, colon));
      secret = formDecode(decoded.slice(colon + 1));
    } catch {
      throw new OAuthError(401, 'invalid_client', 'Malformed client credentials');
    }
    if (form.client_id && form.client_id !== clientId) throw new OAuthError(401, 'invalid_client', 'Client mismatch');
    method = 'client_secret_basic';
  }
  if (!clientId) throw new OAuthError(401, 'invalid_client', 'Client authentication failed');
  const client = await liveClient(em, clientId);
  const expected = client?.clientSecretHash ?? sha256Hex('no client');
  const secretOk = constantTimeEqual(sha256Hex(secret ?? ''), expected);
  if (!client || client.tokenEndpointAuthMethod !== method) {
    throw new OAuthError(401, 'invalid_client', 'Client authentication failed');
  }
  if (method !== 'none' && !secretOk) throw new OAuthError(401, 'invalid_client', 'Client authentication failed');
  return client;
}

// ---------------------------------------------------------------------------------------------
// Authorization requests and codes

export interface ValidAuthorizeRequest {
  client: OAuth2Client;
  redirectUri: string;
  /** Whether the request named `redirect_uri` (else the client's only registered one is used). */
  redirectUriGiven: boolean;
  scopes: string[];
  subType: OAuth2SubType;
  codeChallenge: string | null;
  nonce: string | null;
  state: string | undefined;
}

/**
 * Checks an authorization request. Problems with the client or redirect URI are never redirected
 * (`redirect: null`); the others may go back to the client as `error` parameters.
 */
export async function validateAuthorizeRequest(em: EntityManager, q: AuthorizeQuery): Promise<ValidAuthorizeRequest> {
  const client = await liveClient(em, q.client_id);
  if (!client) throw new OAuthError(400, 'invalid_client', 'Unknown client');
  let redirectUri = q.redirect_uri;
  if (!redirectUri) {
    if (client.redirectUris.length !== 1) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required');
    redirectUri = client.redirectUris[0]!;
  }
  if (!matchesRedirectUri(client.redirectUris, redirectUri)) {
    throw new OAuthError(400, 'invalid_request', 'redirect_uri is not registered for this client');
  }
  if (q.response_type !== 'code') throw new OAuthError(400, 'unsupported_response_type', 'response_type must be code');
  if (q.response_mode && q.response_mode !== 'query') throw new OAuthError(400, 'invalid_request', 'Only response_mode=query is supported');
  const allowed = client.scope.split(' ').filter(Boolean);
  const requested = q.scope === undefined ? allowed : [...new Set(q.scope.split(' ').filter(Boolean))];
  const unknown = requested.filter((s) => !OAUTH2_SCOPES.includes(s) || !allowed.includes(s));
  if (unknown.length) throw new OAuthError(400, 'invalid_scope', `Scope not allowed for this client: ${unknown.join(' ')}`);
  if (!requested.length) throw new OAuthError(400, 'invalid_scope', 'No scope requested');
  if (q.code_challenge !== undefined || q.code_challenge_method !== undefined) {
    if ((q.code_challenge_method ?? 'plain') !== 'S256') {
      throw new OAuthError(400, 'invalid_request', 'code_challenge_method must be S256');
    }
    if (!q.code_challenge || !/^[A-Za-z0-9_-]{43}$/.test(q.code_challenge)) {
      throw new OAuthError(400, 'invalid_request', 'code_challenge must be a base64url SHA-256 (43 characters)');
    }
  } else if (client.tokenEndpointAuthMethod === 'none') {
    throw new OAuthError(400, 'invalid_request', 'A public client must use PKCE (code_challenge with S256)');
  }
  return {
    client,
    redirectUri,
    redirectUriGiven: !!q.redirect_uri,
    scopes: requested,
    subType: q.sub_type,
    codeChallenge: q.code_challenge ?? null,
    nonce: q.nonce ?? null,
    state: q.state,
  };
}

/** The redirect back to the client: `code` or `error`, with `state` and `iss` (RFC 9207). */
export function clientRedirect(cfg: Config, redirectUri: string, params: Record<string, string | undefined>): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  u.searchParams.set('iss', issuerOf(cfg));
  return u.toString();
}

export async function organizationsOf(em: EntityManager, userId: string): Promise<Organization[]> {
  const members = await em.find(Member, { user: userId }, { populate: ['organization'], orderBy: { createdAt: 'asc' } });
  return members.map((m) => m.organization as Organization);
}

export async function issueCode(
  em: EntityManager,
  r: ValidAuthorizeRequest,
  userId: string,
  organizationId: string | null,
): Promise<string> {
  const code = randomToken(CODE_PREFIX, 32);
  em.create(OAuth2AuthorizationCode, {
    codeHash: sha256Hex(code),
    client: r.client,
    user: em.getReference(User, userId),
    subType: r.subType,
    organization: organizationId ? em.getReference(Organization, organizationId) : null,
    scopes: r.scopes,
    // Empty when the request named none: the token request then need not name one (RFC 6749 §4.1.3).
    redirectUri: r.redirectUriGiven ? r.redirectUri : '',
    codeChallenge: r.codeChallenge,
    nonce: r.nonce,
    expiresAt: new Date(Date.now() + CODE_TTL_MS),
  });
  await em.flush();
  return code;
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

// ---------------------------------------------------------------------------------------------
// Tokens

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  id_token?: string;
}

async function issueTokens(em: EntityManager, cfg: Config, grant: OAuth2Grant, scopes: string[], opts: { nonce?: string | null }): Promise<TokenResponse> {
  const client = grant.client as OAuth2Client;
  const tag = grant.subType === 'user' ? 'u_' : 'o_';
  const accessToken = randomToken(ACCESS_TOKEN_PREFIX + tag, 32);
  const withRefresh = client.grantTypes.includes('refresh_token');
  const refreshToken = withRefresh ? randomToken(REFRESH_TOKEN_PREFIX + tag, 32) : null;
  const now = new Date();
  em.create(OAuth2Token, {
    grant,
    accessTokenHash: sha256Hex(accessToken),
    refreshTokenHash: refreshToken ? sha256Hex(refreshToken) : null,
    scopes,
    accessExpiresAt: new Date(now.getTime() + cfg.OAUTH2_ACCESS_TOKEN_TTL_SECONDS * 1000),
    refreshExpiresAt: refreshToken ? new Date(now.getTime() + cfg.OAUTH2_REFRESH_TOKEN_TTL_SECONDS * 1000) : null,
  });
  const out: TokenResponse = {
    access_token: accessToken,
    token_type: 'Bearer',
    expires_in: cfg.OAUTH2_ACCESS_TOKEN_TTL_SECONDS,
    scope: scopes.join(' '),
  };
  if (refreshToken) out.refresh_token = refreshToken;
  if (scopes.includes('openid')) out.id_token = await signIdToken(em, cfg, grant, scopes, opts.nonce ?? null);
  await em.flush();
  return out;
}

async function revokeGrant(em: EntityManager, grantId: string): Promise<void> {
  const now = new Date();
  await em.nativeUpdate(OAuth2Grant, { id: grantId, revokedAt: null }, { revokedAt: now });
  await em.nativeUpdate(OAuth2Token, { grant: grantId, revokedAt: null }, { revokedAt: now });
}

/** `authorization_code` grant. A code is good once: its second use revokes what the first produced. */
export async function exchangeCode(em: EntityManager, cfg: Config, client: OAuth2Client, form: Record<string, string>): Promise<TokenResponse> {
  if (!client.grantTypes.includes('authorization_code')) throw new OAuthError(400, 'unauthorized_client', 'Grant type not allowed');
  if (!form.code) throw new OAuthError(400, 'invalid_request', 'code is required');
  const code = await em.findOne(OAuth2AuthorizationCode, { codeHash: sha256Hex(form.code) }, { populate: ['grant'] });
  if (!code || code.client.id !== client.id) throw new OAuthError(400, 'invalid_grant', 'Invalid authorization code');
  const claimed = await em.nativeUpdate(OAuth2AuthorizationCode, { id: code.id, usedAt: null }, { usedAt: new Date() });
  if (claimed === 0) {
    if (code.grant) await revokeGrant(em, code.grant.id);
    throw new OAuthError(400, 'invalid_grant', 'Authorization code already used');
  }
  if (code.expiresAt.getTime() <= Date.now()) throw new OAuthError(400, 'invalid_grant', 'Authorization code expired');
  // RFC 6749 §4.1.3: required, and identical, only when the authorization request included it; when it
  // did not, one sent anyway must still be registered for the client.
  if (code.redirectUri) {
    if (form.redirect_uri !== code.redirectUri) throw new OAuthError(400, 'invalid_grant', 'redirect_uri does not match the authorization request');
  } else if (form.redirect_uri !== undefined && !matchesRedirectUri(client.redirectUris, form.redirect_uri)) {
    throw new OAuthError(400, 'invalid_grant', 'redirect_uri is not registered for this client');
  }
  if (code.codeChallenge) {
    if (!form.code_verifier) throw new OAuthError(400, 'invalid_grant', 'code_verifier is required');
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(form.code_verifier) || !constantTimeEqual(s256(form.code_verifier), code.codeChallenge)) {
      throw new OAuthError(400, 'invalid_grant', 'code_verifier does not match the code challenge');
    }
  } else if (form.code_verifier) {
    throw new OAuthError(400, 'invalid_grant', 'No code challenge was sent with the authorization request');
  }
  const grant = em.create(OAuth2Grant, {
    client,
    user: code.user,
    subType: code.subType,
    organization: code.organization ?? null,
    scopes: code.scopes,
    nonce: code.nonce ?? null,
    authTime: code.createdAt,
  });
  code.grant = grant;
  await em.flush();
  return issueTokens(em, cfg, grant, code.scopes, { nonce: code.nonce });
}

/** `refresh_token` grant: the refresh token is spent and replaced; a spent one coming back revokes the family. */
export async function refresh(em: EntityManager, cfg: Config, client: OAuth2Client, form: Record<string, string>): Promise<TokenResponse> {
  if (!client.grantTypes.includes('refresh_token')) throw new OAuthError(400, 'unauthorized_client', 'Grant type not allowed');
  if (!form.refresh_token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required');
  const token = await em.findOne(OAuth2Token, { refreshTokenHash: sha256Hex(form.refresh_token) }, { populate: ['grant', 'grant.client'] });
  const grant = token?.grant as OAuth2Grant | undefined;
  if (!token || !grant || grant.client.id !== client.id) throw new OAuthError(400, 'invalid_grant', 'Invalid refresh token');
  // A revoked access token (token.revokedAt) leaves its refresh token usable; a revoked grant does not.
  if (grant.revokedAt) throw new OAuthError(400, 'invalid_grant', 'Refresh token revoked');
  const spent = await em.nativeUpdate(OAuth2Token, { id: token.id, refreshUsedAt: null }, { refreshUsedAt: new Date() });
  if (spent === 0) {
    await revokeGrant(em, grant.id);
    throw new OAuthError(400, 'invalid_grant', 'Refresh token already used; every token of this authorization is revoked');
  }
  if (!token.refreshExpiresAt || token.refreshExpiresAt.getTime() <= Date.now()) throw new OAuthError(400, 'invalid_grant', 'Refresh token expired');
  let scopes = token.scopes;
  if (form.scope !== undefined) {
    const asked = [...new Set(form.scope.split(' ').filter(Boolean))];
    const beyond = asked.filter((s) => !grant.scopes.includes(s));
    if (beyond.length) throw new OAuthError(400, 'invalid_scope', `Scope not granted: ${beyond.join(' ')}`);
    if (!asked.length) throw new OAuthError(400, 'invalid_scope', 'No scope requested');
    scopes = asked;
  }
  return issueTokens(em, cfg, grant, scopes, {});
}

/** A live access token (not expired, not revoked, its grant and client live), with its grant. */
export async function liveAccessToken(em: EntityManager, raw: string): Promise<OAuth2Token | null> {
  const t = await em.findOne(OAuth2Token, { accessTokenHash: sha256Hex(raw) }, { populate: ['grant', 'grant.client'] });
  if (!t || t.revokedAt || t.accessExpiresAt.getTime() <= Date.now()) return null;
  const g = t.grant as OAuth2Grant;
  if (g.revokedAt || (g.client as OAuth2Client).deletedAt) return null;
  return t;
}

export async function resolveAccessToken(em: EntityManager, raw: string): Promise<Principal | null> {
  const t = await liveAccessToken(em, raw);
  if (!t) return null;
  const g = t.grant as OAuth2Grant;
  // An organization subject lasts as long as the approving user is a member of that organization.
  if (g.subType === 'organization' && (!g.organization || !(await em.count(Member, { user: g.user.id, organization: g.organization.id })))) return null;
  return {
    kind: 'oauth2',
    subject: g.subType === 'organization' && g.organization ? { kind: 'organization', organizationId: g.organization.id } : { kind: 'user', userId: g.user.id },
    tokenId: t.id,
    scopes: new Set(t.scopes),
  };
}

const subjectOf = (g: OAuth2Grant) => (g.subType === 'organization' && g.organization ? g.organization.id : g.user.id);

/** RFC 7662: what the client's own token is; anything else (unknown, dead, another client's) is inactive. */
export async function introspect(em: EntityManager, cfg: Config, client: OAuth2Client, form: Record<string, string>) {
  const raw = form.token ?? '';
  const hash = sha256Hex(raw);
  const hint = form.token_type_hint;
  const order = hint === 'refresh_token' ? ['refresh_token', 'access_token'] : ['access_token', 'refresh_token'];
  for (const kind of order) {
    const t = await em.findOne(OAuth2Token, kind === 'access_token' ? { accessTokenHash: hash } : { refreshTokenHash: hash }, {
      populate: ['grant', 'grant.client'],
    });
    if (!t) continue;
    const g = t.grant as OAuth2Grant;
    const exp = kind === 'access_token' ? t.accessExpiresAt : t.refreshExpiresAt;
    const revoked = kind === 'access_token' ? !!t.revokedAt : !!t.refreshUsedAt;
    const dead = revoked || !!g.revokedAt || !exp || exp.getTime() <= Date.now();
    if (dead || g.client.id !== client.id) return { active: false };
    return {
      active: true,
      client_id: client.clientId,
      token_type: kind,
      scope: t.scopes.join(' '),
      sub_type: g.subType,
      sub: subjectOf(g),
      aud: client.clientId,
      iss: issuerOf(cfg),
      exp: nowSeconds(exp),
      iat: nowSeconds(t.createdAt),
    };
  }
  return { active: false };
}

/** RFC 7009: revoking an access token ends it; revoking a refresh token ends its whole authorization. */
export async function revoke(em: EntityManager, client: OAuth2Client, form: Record<string, string>): Promise<void> {
  const hash = sha256Hex(form.token ?? '');
  const byRefresh = await em.findOne(OAuth2Token, { refreshTokenHash: hash }, { populate: ['grant'] });
  if (byRefresh && (byRefresh.grant as OAuth2Grant).client.id === client.id) {
    await revokeGrant(em, byRefresh.grant.id);
    return;
  }
  const byAccess = await em.findOne(OAuth2Token, { accessTokenHash: hash }, { populate: ['grant'] });
  if (byAccess && (byAccess.grant as OAuth2Grant).client.id === client.id) {
    await em.nativeUpdate(OAuth2Token, { id: byAccess.id, revokedAt: null }, { revokedAt: new Date() });
  }
}

export { revokeGrant };

// ---------------------------------------------------------------------------------------------
// Id tokens and userinfo

export async function userInfo(em: EntityManager, principal: Principal & { kind: 'oauth2' }) {
  if (principal.subject.kind === 'organization') {
    const org = await em.findOneOrFail(Organization, { id: principal.subject.organizationId });
    return { sub: org.id, name: org.name };
  }
  const user = await em.findOneOrFail(User, { id: principal.subject.userId });
  return claimsFor(user, principal.scopes);
}

function claimsFor(user: User, scopes: Set<string> | string[]): Record<string, unknown> {
  const has = (s: string) => (Array.isArray(scopes) ? scopes.includes(s) : scopes.has(s));
  const out: Record<string, unknown> = { sub: user.id };
  if (has('profile')) out.name = user.name || null;
  if (has('email')) {
    out.email = user.email;
    out.email_verified = user.emailVerified;
  }
  return out;
}

async function signIdToken(em: EntityManager, cfg: Config, grant: OAuth2Grant, scopes: string[], nonce: string | null): Promise<string> {
  const key = await currentSigningKey(em, cfg);
  let claims: Record<string, unknown>;
  if (grant.subType === 'organization' && grant.organization) {
    const org = await em.findOneOrFail(Organization, { id: grant.organization.id });
    claims = { sub: org.id, ...(scopes.includes('profile') ? { name: org.name } : {}) };
  } else {
    claims = claimsFor(await em.findOneOrFail(User, { id: grant.user.id }), scopes);
  }
  const jwt = new SignJWT({ ...claims, auth_time: nowSeconds(grant.authTime), ...(nonce ? { nonce } : {}) })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
    .setIssuer(issuerOf(cfg))
    .setAudience((grant.client as OAuth2Client).clientId)
    .setIssuedAt()
    .setExpirationTime(`${cfg.OAUTH2_ACCESS_TOKEN_TTL_SECONDS}s`);
  return jwt.sign(key.privateKey);
}

const privateKeys = new Map<string, CryptoKey>();

/**
 * The key that signs id tokens: the newest live one, or a new RSA-2048 key when there is none or it
 * is older than OAUTH2_SIGNING_KEY_MAX_AGE_DAYS. Keys older than twice that are retired from the JWKS.
 */
export async function currentSigningKey(em: EntityManager, cfg: Config): Promise<{ kid: string; privateKey: CryptoKey }> {
  const maxAgeMs = cfg.OAUTH2_SIGNING_KEY_MAX_AGE_DAYS * 86_400_000;
  const key = await em.findOne(OAuth2SigningKey, { retiredAt: null }, { orderBy: { createdAt: 'desc' } });
  if (!key || key.createdAt.getTime() < Date.now() - maxAgeMs) {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
    const kid = randomToken('', 12);
    const publicJwk = { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' };
    const fresh = em.fork();
    fresh.create(OAuth2SigningKey, {
      kid,
      privateKeySealed: seal(cfg.SECRET, KEY_PURPOSE, JSON.stringify(await exportJWK(privateKey))),
      publicJwk,
    });
    await fresh.flush();
    await fresh.nativeUpdate(OAuth2SigningKey, { retiredAt: null, createdAt: { $lt: new Date(Date.now() - 2 * maxAgeMs) } }, { retiredAt: new Date() });
    privateKeys.set(kid, privateKey as CryptoKey);
    return { kid, privateKey: privateKey as CryptoKey };
  }
  let privateKey = privateKeys.get(key.kid);
  if (!privateKey) {
    const jwk = JSON.parse(open(cfg.SECRET, KEY_PURPOSE, key.privateKeySealed)) as JWK;
    privateKey = (await importJWK(jwk, 'RS256')) as CryptoKey;
    privateKeys.set(key.kid, privateKey);
  }
  return { kid: key.kid, privateKey };
}

export async function jwks(em: EntityManager, cfg: Config): Promise<{ keys: Record<string, unknown>[] }> {
  await currentSigningKey(em, cfg);
  const keys = await em.find(OAuth2SigningKey, { retiredAt: null }, { orderBy: { createdAt: 'desc' } });
  return { keys: keys.map((k) => k.publicJwk) };
}
