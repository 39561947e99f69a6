/**
 * Customers connect the GitHub or Discord account their benefit grants need, through the platforms'
 * OAuth apps (authorization code flow):
 * - `GET /v1/customer-portal/oauth-accounts/authorize?platform=github|discord&return_to=…` (customer
 *   session) answers `{url}`, the provider's authorize page, with a signed `state` (customer, platform,
 *   return_to, the hash of a browser binding; 10 minutes), and sets the binding: a random 256-bit value
 *   in an HttpOnly, SameSite=Lax cookie for the callback path (`emporia_oauth_connect_<platform>`).
 * - The provider sends the browser to `GET /v1/customer-portal/oauth-accounts/callback?code&state`
 *   (public): the state must be signed and carry the hash of this browser's binding cookie (compared
 *   in constant time; a state from another browser is a 400, the cookie is cleared), then the code is exchanged for a token, the user read (`GET /user`, `GET /users/@me`), the
 *   account stored on the customer (`oauth_accounts`), and every not-yet-granted grant of that platform
 *   takes it (the same path as choosing an account on the grant, so the grant workflow then grants it).
 *   The browser goes back to `return_to`, with `oauth_error=…` if something failed.
 * - `DELETE /v1/customer-portal/oauth-accounts/{platform}` forgets the connection (grants keep theirs).
 * The provider's access token is used once and not stored: grants act through the seller's
 * integration (GitHub token, Discord bot), only the account id and name are kept.
 */
import { createHash, createHmac, randomBytes, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { jwtVerify, SignJWT } from 'jose';
import { z } from 'zod/v4';
import type { Config } from '../../config.ts';
import { inTransaction } from '../../kit/db.ts';
import { constantTimeEqual } from '../../kit/crypto.ts';
import { ApiError, fieldError } from '../../kit/errors.ts';
import type { CustomerPrincipal, Principal } from '../../kit/principals.ts';
import { route, type RouteSpec } from '../../kit/routes.ts';
import { requireFullSession } from './scope.ts';
import { forgetConnectedAccount, linkConnectedAccount } from './service.ts';

export const OAUTH_PLATFORMS = ['github', 'discord'] as const;
export type OAuthPlatform = (typeof OAUTH_PLATFORMS)[number];
const BENEFIT_TYPE = { github: 'github_repository', discord: 'discord' } as const;
const STATE_TTL = '10m';
const BINDING_MAX_AGE_S = 600;

const asCustomer = (p: Principal) => p as CustomerPrincipal;
const callbackUrl = (cfg: Config) => `${cfg.PUBLIC_URL.replace(/\/$/, '')}/v1/customer-portal/oauth-accounts/callback`;
const stateKey = (cfg: Config) => createHmac('sha256', cfg.SECRET).update('customer-oauth-state').digest();

interface Provider {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  userUrl: string;
  scope: string;
  /** The provider's user as `{id, username}`. */
  user(body: Record<string, unknown>): { id: string; username: string } | null;
}

function provider(cfg: Config, platform: OAuthPlatform): Provider | null {
  if (platform === 'github') {
    if (!cfg.GITHUB_BENEFITS_CLIENT_ID || !cfg.GITHUB_BENEFITS_CLIENT_SECRET) return null;
    const base = cfg.GITHUB_OAUTH_URL.replace(/\/$/, '');
    return {
      clientId: cfg.GITHUB_BENEFITS_CLIENT_ID,
      clientSecret: cfg.GITHUB_BENEFITS_CLIENT_SECRET,
      authorizeUrl: `${base}/login/oauth/authorize`,
      tokenUrl: `${base}/login/oauth/access_token`,
      userUrl: `${cfg.GITHUB_API_URL.replace(/\/$/, '')}/user`,
      scope: 'read:user',
      user: (b) => (typeof b.id === 'number' && typeof b.login === 'string' ? { id: String(b.id), username: b.login } : null),
    };
  }
  if (!cfg.DISCORD_BENEFITS_CLIENT_ID || !cfg.DISCORD_BENEFITS_CLIENT_SECRET) return null;
  const api = cfg.DISCORD_API_URL.replace(/\/$/, '');
  return {
    clientId: cfg.DISCORD_BENEFITS_CLIENT_ID,
    clientSecret: cfg.DISCORD_BENEFITS_CLIENT_SECRET,
    authorizeUrl: `${cfg.DISCORD_OAUTH_URL.replace(/\/$/, '')}/oauth2/authorize`,
    tokenUrl: `${api}/oauth2/token`,
    userUrl: `${api}/users/@me`,
    scope: 'identify',
    user: (b) => (typeof b.id === 'string' && typeof b.username === 'string' ? { id: b.id, username: b.username } : null),
  };
}

/** The platforms the portal can connect (their OAuth app is configured). */
export const connectablePlatforms = (cfg: Config) => OAUTH_PLATFORMS.filter((p) => provider(cfg, p));

/** `return_to` must be a page of this application's portal. */
function checkReturnTo(cfg: Config, returnTo: string): string {
  const base = new URL(cfg.PUBLIC_URL);
  let u: URL;
  try {
    u = new URL(returnTo);
  } catch {
    throw fieldError(['query', 'return_to'], 'Must be an absolute URL.', 'value_error', returnTo);
  }
  if (u.origin !== base.origin || !u.pathname.startsWith('/portal/')) {
    throw fieldError(['query', 'return_to'], 'Must be a page of the customer portal.', 'value_error', returnTo);
  }
  return u.toString();
}

class OAuthFailure extends Error {}

const bindingCookie = (platform: OAuthPlatform) => `emporia_oauth_connect_${platform}`;
const bindingHash = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Sets (or, with `null`, clears) the browser binding of a connection flow, sent back only to the callback. */
function setBinding(cfg: Config, res: Response, platform: OAuthPlatform, value: string | null): void {
  const secure = new URL(cfg.PUBLIC_URL).protocol === 'https:' ? '; Secure' : '';
  const cookie = `${bindingCookie(platform)}=${value ?? ''}; Path=${new URL(callbackUrl(cfg)).pathname}; Max-Age=${value ? BINDING_MAX_AGE_S : 0}; HttpOnly; SameSite=Lax${secure}`;
  res.append('Set-Cookie', cookie);
}

/** The binding cookie this browser sent for `platform`, if any. */
function bindingOf(req: Request, platform: OAuthPlatform): string | null {
  const name = bindingCookie(platform);
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === name) return v.join('=') || null;
  }
  return null;
}

async function exchange(p: Provider, code: string, redirectUri: string): Promise<{ id: string; username: string }> {
  const form = new URLSearchParams({ client_id: p.clientId, client_secret: p.clientSecret, code, redirect_uri: redirectUri, grant_type: 'authorization_code' });
  let token: string | undefined;
  try {
    const res = await fetch(p.tokenUrl, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      signal: AbortSignal.timeout(15_000),
    });
    const body = (await res.json().catch(() => ({}))) as Record<string, unknown>; // ignore: a body that is not JSON is refused below
    if (res.ok && typeof body.access_token === 'string') token = body.access_token;
    else throw new OAuthFailure(typeof body.error === 'string' ? body.error : `token_${res.status}`);
    const me = await fetch(p.userUrl, {
      headers: { accept: 'application/json', authorization: `Bearer ${token}`, 'user-agent': 'emporia' },
      signal: AbortSignal.timeout(15_000),
    });
    const user = me.ok ? p.user((await me.json()) as Record<string, unknown>) : null;
    if (!user) throw new OAuthFailure(`user_${me.status}`);
    return user;
  } catch (err) {
    if (err instanceof OAuthFailure) throw err;
    throw new OAuthFailure('provider_unreachable');
  }
}

const platformSchema = z.enum(OAUTH_PLATFORMS);

export const routes: RouteSpec[] = [
  route({
    method: 'get',
    path: '/v1/customer-portal/oauth-accounts/authorize',
    summary: 'Start connecting a GitHub or Discord account (answers the provider’s authorize URL)',
    tags: ['customer-portal'],
    auth: { kinds: ['customer'], scopes: ['customer_portal:write'] },
    query: z.object({ platform: platformSchema, return_to: z.string().max(1024) }),
    response: z.object({ url: z.string() }),
    async handler({ query, principal, deps, res }) {
      requireFullSession(principal, 'Connecting an account');
      const p = provider(deps.cfg, query.platform);
      if (!p) throw fieldError(['query', 'platform'], `Connecting a ${query.platform === 'github' ? 'GitHub' : 'Discord'} account is not configured.`, 'value_error', query.platform);
      const returnTo = checkReturnTo(deps.cfg, query.return_to);
      const binding = randomBytes(32).toString('base64url');
      const state = await new SignJWT({ platform: query.platform, return_to: returnTo, nonce: randomUUID(), bnd: bindingHash(binding) })
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject(asCustomer(principal).customerId)
        .setAudience('customer-oauth')
        .setIssuedAt()
        .setExpirationTime(STATE_TTL)
        .sign(stateKey(deps.cfg));
      const url = new URL(p.authorizeUrl);
      url.search = new URLSearchParams({ client_id: p.clientId, redirect_uri: callbackUrl(deps.cfg), response_type: 'code', scope: p.scope, state }).toString();
      setBinding(deps.cfg, res, query.platform, binding);
      return { url: url.toString() };
    },
  }),
  route({
    method: 'get',
    path: '/v1/customer-portal/oauth-accounts/callback',
    summary: 'Where GitHub / Discord send the customer back (redirects to the portal page that started it)',
    tags: ['customer-portal'],
    auth: 'public',
    // A state carries a return_to of at most 1024 characters: 2048 bounds it, and keeps an over-long
    // one within the URL size Node accepts (so it is a 422, not a 431).
    query: z.object({ state: z.string().max(2048), code: z.string().max(1024).optional(), error: z.string().max(255).optional() }),
    status: 303,
    async handler({ query, em, deps, req, res }) {
      let claims;
      try {
        ({ payload: claims } = await jwtVerify(query.state, stateKey(deps.cfg), { audience: 'customer-oauth', algorithms: ['HS256'] }));
      } catch {
        throw new ApiError(400, 'BadRequest', 'This connection link is invalid or has expired: start again from the portal.');
      }
      const platform = platformSchema.parse(claims.platform);
      // Bound to the browser that started the flow: a state sent to another browser is refused.
      const binding = bindingOf(req, platform);
      setBinding(deps.cfg, res, platform, null);
      if (!binding || typeof claims.bnd !== 'string' || !constantTimeEqual(bindingHash(binding), claims.bnd)) {
        throw new ApiError(400, 'BadRequest', 'This connection was started in another browser or has expired: start again from the portal.');
      }
      const back = new URL(String(claims.return_to));
      const fail = (code: string) => {
        back.searchParams.set('oauth_error', code);
        res.redirect(303, back.toString());
      };
      const p = provider(deps.cfg, platform);
      if (!p) return fail('not_configured');
      if (!query.code) return fail(query.error ?? 'access_denied');
      let account;
      try {
        account = await exchange(p, query.code, callbackUrl(deps.cfg));
      } catch (err) {
        return fail(err instanceof OAuthFailure ? err.message : 'failed');
      }
      const { afterCommit } = await inTransaction(em, (tx, after) => linkConnectedAccount(tx, after, deps, claims.sub!, BENEFIT_TYPE[platform], platform, account));
      await afterCommit();
      back.searchParams.set('connected', platform);
      res.redirect(303, back.toString());
    },
  }),
  route({
    method: 'delete',
    path: '/v1/customer-portal/oauth-accounts/:platform',
    summary: 'Forget a connected GitHub or Discord account (grants keep the account they were given)',
    tags: ['customer-portal'],
    auth: { kinds: ['customer'], scopes: ['customer_portal:write'] },
    params: z.object({ platform: platformSchema }),
    status: 204,
    async handler({ params, principal, em }) {
      requireFullSession(principal, 'Disconnecting an account');
      await inTransaction(em, (tx) => forgetConnectedAccount(tx, asCustomer(principal).customerId, params.platform));
    },
  }),
];
