/**
 * The one OAuth 2.0 / OpenID Connect engine behind every social provider: the authorization URL (state,
 * S256 PKCE, scopes, login hint), the code and refresh-token grants, id-token verification against the
 * provider's key set (jose), and the profile read. Per-provider differences live in `providers.ts`.
 */
import { CodeChallengeMethod, OAuth2Client, OAuth2Tokens } from 'arctic';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type { Config } from '../../config.ts';
import { PROVIDERS, SOCIAL_PROVIDER_IDS, type ProviderEndpoints, type ProviderSpec, type SocialProfile, type SocialProviderId } from './providers.ts';

export type SocialConfig = Pick<Config, 'SOCIAL_PROVIDER_ENDPOINTS'> & Partial<Record<string, unknown>>;

export interface ConfiguredProvider {
  spec: ProviderSpec;
  endpoints: ProviderEndpoints;
  clientId: string;
  clientSecret: string | null;
}

/** The provider when its client id is configured (`<PROVIDER>_CLIENT_ID`), else null. */
export function configuredProvider(cfg: SocialConfig, id: string): ConfiguredProvider | null {
  if (!(SOCIAL_PROVIDER_IDS as readonly string[]).includes(id)) return null;
  const spec = PROVIDERS[id as SocialProviderId];
  const clientId = cfg[`${id.toUpperCase()}_CLIENT_ID`];
  if (typeof clientId !== 'string' || !clientId) return null;
  const secret = cfg[`${id.toUpperCase()}_CLIENT_SECRET`];
  return {
    spec,
    endpoints: { ...spec.endpoints, ...cfg.SOCIAL_PROVIDER_ENDPOINTS[id as SocialProviderId] },
    clientId,
    clientSecret: typeof secret === 'string' && secret ? secret : null,
  };
}

export function configuredProviderIds(cfg: SocialConfig): SocialProviderId[] {
  return SOCIAL_PROVIDER_IDS.filter((id) => configuredProvider(cfg, id) !== null);
}

/** The authorization URL a browser is sent to. */
export function authorizationUrl(
  p: ConfiguredProvider,
  opts: { state: string; codeVerifier: string; redirectUri: string; scopes?: string[]; loginHint?: string },
): URL {
  const client = new OAuth2Client(p.clientId, null, opts.redirectUri);
  const scopes = [...new Set([...p.spec.scopes, ...(opts.scopes ?? [])])];
  const url = p.spec.pkce
    ? client.createAuthorizationURLWithPKCE(p.endpoints.authorization, opts.state, CodeChallengeMethod.S256, opts.codeVerifier, scopes)
    : client.createAuthorizationURL(p.endpoints.authorization, opts.state, scopes);
  if (p.spec.scopeJoiner && scopes.length) url.searchParams.set('scope', scopes.join(p.spec.scopeJoiner));
  if (p.spec.clientIdParam) {
    url.searchParams.delete('client_id');
    url.searchParams.set(p.spec.clientIdParam, p.clientId);
  }
  for (const [k, v] of Object.entries(p.spec.authParams ?? {})) url.searchParams.set(k, v);
  if (opts.loginHint) url.searchParams.set('login_hint', opts.loginHint);
  return url;
}

export interface TokenSet {
  tokenType: string;
  accessToken: string;
  refreshToken: string | null;
  idToken: string | null;
  accessTokenExpiresAt: Date | null;
  refreshTokenExpiresAt: Date | null;
  scopes: string[];
}

export class TokenRequestError extends Error {}

async function tokenRequest(p: ConfiguredProvider, params: Record<string, string>): Promise<TokenSet> {
  const body = new URLSearchParams(params);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
    'user-agent': 'emporia',
  };
  if (p.spec.clientAuth === 'post' || !p.clientSecret) {
    body.set(p.spec.clientIdParam ?? 'client_id', p.clientId);
    if (p.clientSecret) body.set('client_secret', p.clientSecret);
  } else {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(p.clientId)}:${encodeURIComponent(p.clientSecret)}`).toString('base64')}`;
  }
  const res = await fetch(p.endpoints.token, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) });
  const data = (await res.json().catch(() => null)) as Record<string, unknown> | null; // ignore: a body that is not JSON is refused below
  if (!res.ok || !data || typeof data !== 'object' || 'error' in data) {
    throw new TokenRequestError(`token endpoint answered ${res.status}: ${String(data?.error ?? '')}`);
  }
  const t = new OAuth2Tokens(data);
  const refreshIn = typeof data.refresh_token_expires_in === 'number' ? data.refresh_token_expires_in : null;
  return {
    tokenType: typeof data.token_type === 'string' ? data.token_type : 'Bearer',
    accessToken: t.accessToken(),
    refreshToken: t.hasRefreshToken() ? t.refreshToken() : null,
    idToken: typeof data.id_token === 'string' ? data.id_token : null,
    accessTokenExpiresAt: typeof data.expires_in === 'number' ? t.accessTokenExpiresAt() : null,
    refreshTokenExpiresAt: refreshIn !== null ? new Date(Date.now() + refreshIn * 1000) : null,
    scopes: t.hasScopes() ? t.scopes().flatMap((s) => s.split(',')).filter(Boolean) : [],
  };
}

/** The authorization-code grant (with the PKCE verifier when the provider takes PKCE). */
export function exchangeCode(
  p: ConfiguredProvider,
  opts: { code: string; codeVerifier: string; redirectUri: string; deviceId?: string },
): Promise<TokenSet> {
  const params: Record<string, string> = { grant_type: 'authorization_code', code: opts.code, redirect_uri: opts.redirectUri };
  if (p.spec.pkce) params.code_verifier = opts.codeVerifier;
  if (opts.deviceId) params.device_id = opts.deviceId;
  return tokenRequest(p, params);
}

export function refreshTokens(p: ConfiguredProvider, refreshToken: string): Promise<TokenSet> {
  return tokenRequest(p, { grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** Google writes its issuer with and without the scheme. */
const issuersOf = (issuer: string) => (issuer === 'https://accounts.google.com' ? [issuer, 'accounts.google.com'] : [issuer]);

const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();
function keySet(url: string) {
  let ks = keySets.get(url);
  if (!ks) {
    ks = createRemoteJWKSet(new URL(url), { timeoutDuration: 5000 });
    keySets.set(url, ks);
  }
  return ks;
}

/**
 * Verifies an id token of this provider: signature against its key set, issuer, audience = our client
 * id, expiry, and the nonce when one is expected. Null when any check fails.
 */
export async function verifyIdToken(
  p: ConfiguredProvider,
  token: string,
  opts: { nonce?: string; audience?: string } = {},
): Promise<JWTPayload | null> {
  if (!p.endpoints.jwks) return null;
  const templated = p.endpoints.issuer?.includes('{tenantid}');
  try {
    const { payload } = await jwtVerify(token, keySet(p.endpoints.jwks), {
      audience: opts.audience ?? p.clientId,
      ...(p.endpoints.issuer && !templated ? { issuer: issuersOf(p.endpoints.issuer) } : {}),
    });
    if (templated && payload.iss !== p.endpoints.issuer!.replace('{tenantid}', String(payload.tid ?? ''))) return null;
    if (opts.nonce !== undefined && payload.nonce !== opts.nonce) return null;
    return payload;
  } catch {
    return null;
  }
}

/**
 * The user's profile after a code grant: the verified id token's claims for OpenID providers that carry
 * the profile there, else the user-info endpoint read with the access token. `extra` is what the
 * callback itself brought (Apple's `user` form field). Null when it cannot be read.
 */
export async function fetchProfile(p: ConfiguredProvider, tokens: TokenSet, extra: Record<string, unknown> = {}): Promise<SocialProfile | null> {
  try {
    let raw: Record<string, unknown>;
    if (p.spec.profileFromIdToken && tokens.idToken) {
      const claims = await verifyIdToken(p, tokens.idToken);
      if (!claims) return null;
      raw = { ...claims, ...extra };
    } else if (p.endpoints.userinfo) {
      const method = p.spec.userinfoMethod ?? 'GET';
      const res = await fetch(p.endpoints.userinfo, {
        method,
        headers: { authorization: `Bearer ${tokens.accessToken}`, accept: 'application/json', 'user-agent': 'emporia' },
        signal: AbortSignal.timeout(10_000),
      });
      if (!res.ok) return null;
      raw = { ...((await res.json()) as Record<string, unknown>), ...extra };
      if (p.spec.extraProfile) raw = await p.spec.extraProfile(tokens.accessToken, raw, p.endpoints);
    } else {
      return null;
    }
    const profile = p.spec.profile(raw);
    if (!profile.id || profile.id === 'undefined') return null;
    return profile;
  } catch {
    return null;
  }
}

/** The profile carried by an id token the client already holds (`idToken` sign-in, one-tap). */
export async function profileFromIdToken(p: ConfiguredProvider, token: string, nonce?: string): Promise<SocialProfile | null> {
  const claims = await verifyIdToken(p, token, { nonce });
  if (!claims) return null;
  const profile = p.spec.profile(claims as Record<string, unknown>);
  return profile.id && profile.id !== 'undefined' ? profile : null;
}
