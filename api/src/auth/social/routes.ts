/**
 * Social sign-in and linked accounts (Better Auth 1.2 wire format): sign-in/social (redirect URL with
 * state and PKCE, or direct id-token sign-in), the provider callback (GET, and POST for form-posting
 * providers such as Apple), link-social, unlink-account, refresh-token, get-access-token, Google
 * one-tap, and the public list of configured providers the sign-in page offers.
 */
import express from 'express';
import { z } from 'zod/v4';
import { Account, User } from '../entities.ts';
import { AuthError } from '../errors.ts';
import {
  authEndpoint,
  authUrl,
  currentSession,
  redirectTarget,
  requestMeta,
  requireFreshSession,
  requireSession,
  type AuthContext,
  type AuthEndpoint,
} from '../http.ts';
import { serializeUser } from '../serialize.ts';
import { createSession, setSessionCookies } from '../sessions.ts';
import { isTrustedProvider, openToken, storeTokens, userForProfile } from './accounts.ts';
import {
  authorizationUrl,
  configuredProvider,
  configuredProviderIds,
  exchangeCode,
  fetchProfile,
  profileFromIdToken,
  refreshTokens,
  type ConfiguredProvider,
  type TokenSet,
} from './engine.ts';
import { PROVIDERS, SOCIAL_PROVIDER_IDS } from './providers.ts';
import { consumeState, createState } from './state.ts';

const e = (status: number, message: string) => () => new AuthError(status, message);

export const SOCIAL_ERRORS = {
  PROVIDER_NOT_FOUND: e(404, 'Provider not found'),
  ID_TOKEN_NOT_SUPPORTED: e(404, 'id_token not supported'),
  INVALID_TOKEN: e(401, 'invalid token'),
  FAILED_TO_GET_USER_INFO: e(401, 'Failed to get user info'),
  USER_EMAIL_NOT_FOUND: e(401, 'User email not found'),
  FAILED_TO_UNLINK_LAST_ACCOUNT: e(400, "You can't unlink your last account"),
  ACCOUNT_NOT_FOUND: e(400, 'Account not found'),
  NO_REFRESH: (id: string) => new AuthError(400, `Provider ${id} does not support token refreshing.`),
  FAILED_TO_REFRESH: e(400, 'Failed to refresh access token'),
  FAILED_TO_GET_ACCESS_TOKEN: e(400, 'Failed to get a valid access token'),
  EITHER_USER_OR_SESSION: e(400, 'Either userId or session is required'),
  SOCIAL_ACCOUNT_ALREADY_LINKED: e(400, 'Social account already linked'),
  INVALID_ID_TOKEN: e(400, 'invalid id token'),
  DIFFERENT_EMAILS: e(401, 'Account not linked - different emails not allowed'),
};

const providerEnum = z.enum(SOCIAL_PROVIDER_IDS);

const idTokenBody = z.object({
  token: z.string(),
  nonce: z.string().optional(),
  accessToken: z.string().optional(),
  refreshToken: z.string().optional(),
  expiresAt: z.number().optional(),
  scopes: z.array(z.string()).optional(),
});

function provider(ctx: AuthContext, id: string): ConfiguredProvider {
  const p = configuredProvider(ctx.deps.cfg, id);
  if (!p) throw SOCIAL_ERRORS.PROVIDER_NOT_FOUND();
  return p;
}

const callbackUri = (ctx: AuthContext, id: string) => authUrl(ctx, `/callback/${id}`);

/** Where the user lands: relative targets on PUBLIC_URL (redirect targets were checked on the POST). */
const landing = (ctx: AuthContext, target: string | undefined) => redirectTarget(ctx, target || '/');

function errorRedirect(ctx: AuthContext, base: string, error: string, extra: Record<string, string> = {}) {
  ctx.res.redirect(302, redirectTarget(ctx, base, { error, ...extra }));
}

function userBody(u: ReturnType<typeof serializeUser>) {
  return { id: u.id, email: u.email, name: u.name, image: u.image, emailVerified: u.emailVerified, createdAt: u.createdAt, updatedAt: u.updatedAt };
}

async function signIn(ctx: AuthContext, user: Parameters<typeof createSession>[1]) {
  const s = await createSession(ctx.em, user, requestMeta(ctx.req));
  setSessionCookies(ctx.res, ctx.deps.cfg, s);
  return s;
}

const disableSignUp = (ctx: AuthContext, requestSignUp: boolean | undefined) =>
  ctx.deps.cfg.SOCIAL_DISABLE_IMPLICIT_SIGN_UP && !requestSignUp;

const callbackParams = z.object({
  code: z.string().optional(),
  state: z.string().optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
  device_id: z.string().optional(),
  user: z.string().optional(),
  iss: z.string().optional(),
});

const parseForm = express.urlencoded({ extended: false, limit: '64kb' });

async function callback(ctx: AuthContext) {
  const id = String(ctx.req.params.provider);
  const defaultError = authUrl(ctx, '/error');
  if (ctx.req.method === 'POST') {
    // A form post (Apple's response_mode=form_post) comes cross-site without our SameSite=Lax cookies:
    // it continues as a GET on our own origin, where the browser sends the state cookie.
    await new Promise<void>((resolve, reject) => parseForm(ctx.req, ctx.res, (err?: unknown) => (err ? reject(err) : resolve())));
    const params = callbackParams.safeParse(ctx.req.body ?? {});
    if (!params.success) return errorRedirect(ctx, defaultError, 'invalid_callback_request');
    const qs = new URLSearchParams(Object.entries(params.data).filter((kv): kv is [string, string] => kv[1] !== undefined));
    return ctx.res.redirect(302, `${callbackUri(ctx, encodeURIComponent(id))}?${qs}`);
  }
  const parsed = callbackParams.safeParse(ctx.req.query);
  if (!parsed.success) return errorRedirect(ctx, defaultError, 'invalid_callback_request');
  const q = parsed.data;
  if (q.error) {
    // The provider's refusal goes to the flow's error page when this browser's state names one.
    const known = q.state ? await consumeState(ctx.em, ctx.deps.cfg, ctx.req, ctx.res, q.state) : null;
    const target = known?.status === 'ok' ? known.value.errorURL || defaultError : defaultError;
    return errorRedirect(ctx, target, q.error, { error_description: q.error_description ?? '' });
  }
  if (!q.state) return errorRedirect(ctx, defaultError, 'state_not_found');
  const outcome = await consumeState(ctx.em, ctx.deps.cfg, ctx.req, ctx.res, q.state);
  if (outcome.status !== 'ok') return errorRedirect(ctx, defaultError, 'please_restart_the_process');
  const state = outcome.value;
  const onError = (code: string) => errorRedirect(ctx, state.errorURL || defaultError, code);
  if (!q.code) return onError('no_code');
  const p = configuredProvider(ctx.deps.cfg, id);
  if (!p || state.providerId !== id) return onError('oauth_provider_not_found');

  let tokens: TokenSet;
  try {
    tokens = await exchangeCode(p, { code: q.code, codeVerifier: state.codeVerifier, redirectUri: callbackUri(ctx, p.spec.id), deviceId: q.device_id });
  } catch (err) {
    ctx.deps.log.warn({ err, provider: id, requestId: ctx.req.id }, 'oauth code exchange failed');
    return onError('invalid_code');
  }
  let extra: Record<string, unknown> = {};
  if (q.user) {
    try {
      extra = { user: JSON.parse(q.user) as unknown };
    } catch {
      extra = {};
    }
  }
  const profile = await fetchProfile(p, tokens, extra);
  if (!profile) return onError('unable_to_get_user_info');
  if (!profile.email) return onError('email_not_found');
  if (!state.callbackURL) return onError('no_callback_url');

  if (state.link) {
    if (!isTrustedProvider(ctx.deps.cfg, p.spec.id) && !profile.emailVerified) return onError('unable_to_link_account');
    const existing = await ctx.em.findOne(Account, { providerId: p.spec.id, accountId: profile.id }, { populate: ['user'] });
    if (existing) {
      if (existing.user.id !== state.link.userId) return onError('account_already_linked_to_different_user');
      storeTokens(ctx.deps.cfg, existing, tokens);
    } else {
      const owner = await ctx.em.findOne(User, { id: state.link.userId });
      if (!owner) return onError('unable_to_link_account');
      storeTokens(ctx.deps.cfg, ctx.em.create(Account, { user: owner, providerId: p.spec.id, accountId: profile.id }), tokens);
    }
    await ctx.em.flush();
    return ctx.res.redirect(302, landing(ctx, state.callbackURL));
  }

  const result = await userForProfile(ctx.deps, ctx.em, p.spec.id, profile, tokens, {
    disableSignUp: disableSignUp(ctx, state.requestSignUp),
  });
  if (!result.ok) return onError(result.error);
  try {
    await signIn(ctx, result.user);
  } catch (err) {
    // A banned user goes to the error page with the ban message, as Better Auth's admin plugin does.
    if (err instanceof AuthError && err.code === 'BANNED_USER') {
      return errorRedirect(ctx, defaultError, 'banned', { error_description: err.message });
    }
    ctx.deps.log.error({ err, requestId: ctx.req.id }, 'social sign-in session failed');
    return onError('unable_to_create_session');
  }
  return ctx.res.redirect(302, landing(ctx, result.isRegister ? state.newUserURL || state.callbackURL : state.callbackURL));
}

/** A provider's id token the client already holds: verified, then its profile. */
async function idTokenProfile(p: ConfiguredProvider, idToken: z.infer<typeof idTokenBody>) {
  if (!p.spec.idTokenSignIn || !p.endpoints.jwks) throw SOCIAL_ERRORS.ID_TOKEN_NOT_SUPPORTED();
  const profile = await profileFromIdToken(p, idToken.token, idToken.nonce);
  if (!profile) throw SOCIAL_ERRORS.INVALID_TOKEN();
  if (!profile.email) throw SOCIAL_ERRORS.USER_EMAIL_NOT_FOUND();
  return profile;
}

const idTokenTokens = (t: z.infer<typeof idTokenBody>): Partial<TokenSet> => ({
  idToken: t.token,
  accessToken: t.accessToken,
  refreshToken: t.refreshToken ?? null,
  accessTokenExpiresAt: t.expiresAt ? new Date(t.expiresAt) : undefined,
  scopes: t.scopes,
});

async function accountFor(ctx: AuthContext, body: { providerId: string; accountId?: string; userId?: string }) {
  const s = await currentSession(ctx);
  // Over HTTP the caller is always the session's user; `userId` is for server-side calls.
  if (!s) throw new AuthError(401, 'Not authenticated', 'UNAUTHORIZED');
  const p = configuredProvider(ctx.deps.cfg, body.providerId);
  if (!p) throw SOCIAL_ERRORS.PROVIDER_NOT_FOUND();
  const accounts = await ctx.em.find(Account, { user: s.user.id, providerId: body.providerId }, { orderBy: { createdAt: 'asc' } });
  const account = body.accountId ? accounts.find((a) => a.id === body.accountId || a.accountId === body.accountId) : accounts[0];
  if (!account) throw SOCIAL_ERRORS.ACCOUNT_NOT_FOUND();
  return { p, account };
}

const tokenQueryBody = z.object({ providerId: z.string(), accountId: z.string().optional(), userId: z.string().optional() });

export const socialEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'get',
    path: '/social-providers',
    handler: async (ctx) => configuredProviderIds(ctx.deps.cfg).map((id) => ({ id, name: PROVIDERS[id].name })),
  }),

  authEndpoint({
    method: 'post',
    path: '/sign-in/social',
    body: z.object({
      provider: providerEnum,
      callbackURL: z.string().optional(),
      newUserCallbackURL: z.string().optional(),
      errorCallbackURL: z.string().optional(),
      disableRedirect: z.boolean().optional(),
      idToken: idTokenBody.optional(),
      scopes: z.array(z.string()).optional(),
      requestSignUp: z.boolean().optional(),
      loginHint: z.string().optional(),
    }),
    handler: async (ctx) => {
      const { body } = ctx;
      const p = provider(ctx, body.provider);
      if (body.idToken) {
        const profile = await idTokenProfile(p, body.idToken);
        const result = await userForProfile(ctx.deps, ctx.em, p.spec.id, profile, idTokenTokens(body.idToken), {
          disableSignUp: disableSignUp(ctx, body.requestSignUp),
        });
        if (!result.ok) throw new AuthError(401, result.error.replace(/_/g, ' '));
        const s = await signIn(ctx, result.user);
        return { redirect: false, token: s.token, url: undefined, user: userBody(serializeUser(result.user)) };
      }
      const { state, codeVerifier } = await createState(ctx.em, ctx.deps.cfg, ctx.res, {
        providerId: p.spec.id,
        callbackURL: body.callbackURL || '/',
        errorURL: body.errorCallbackURL,
        newUserURL: body.newUserCallbackURL,
        requestSignUp: body.requestSignUp,
      });
      const url = authorizationUrl(p, { state, codeVerifier, redirectUri: callbackUri(ctx, p.spec.id), scopes: body.scopes, loginHint: body.loginHint });
      return { url: url.href, redirect: !body.disableRedirect };
    },
  }),

  authEndpoint({ method: 'get', path: '/callback/:provider', handler: async (ctx) => void (await callback(ctx)) }),
  authEndpoint({ method: 'post', path: '/callback/:provider', handler: async (ctx) => void (await callback(ctx)) }),

  authEndpoint({
    method: 'post',
    path: '/link-social',
    body: z.object({
      provider: providerEnum,
      callbackURL: z.string().optional(),
      scopes: z.array(z.string()).optional(),
      idToken: idTokenBody.optional(),
    }),
    handler: async (ctx) => {
      const me = await requireSession(ctx);
      const { body } = ctx;
      const p = provider(ctx, body.provider);
      if (body.idToken) {
        const profile = await idTokenProfile(p, body.idToken);
        const taken = await ctx.em.findOne(Account, { providerId: p.spec.id, accountId: profile.id }, { populate: ['user'] });
        if (taken) {
          if (taken.user.id !== me.user.id) throw SOCIAL_ERRORS.SOCIAL_ACCOUNT_ALREADY_LINKED();
          return { redirect: false, url: '', status: true };
        }
        if (profile.email?.toLowerCase() !== me.user.email) throw SOCIAL_ERRORS.DIFFERENT_EMAILS();
        storeTokens(ctx.deps.cfg, ctx.em.create(Account, { user: me.user, providerId: p.spec.id, accountId: profile.id }), idTokenTokens(body.idToken));
        await ctx.em.flush();
        return { redirect: false, url: '', status: true };
      }
      const { state, codeVerifier } = await createState(ctx.em, ctx.deps.cfg, ctx.res, {
        providerId: p.spec.id,
        callbackURL: body.callbackURL || '/',
        link: { userId: me.user.id, email: me.user.email },
      });
      const url = authorizationUrl(p, { state, codeVerifier, redirectUri: callbackUri(ctx, p.spec.id), scopes: body.scopes });
      return { url: url.href, redirect: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/unlink-account',
    body: z.object({ providerId: z.string(), accountId: z.string().optional() }),
    handler: async (ctx) => {
      const me = await requireFreshSession(ctx);
      const { providerId, accountId } = ctx.body;
      const accounts = await ctx.em.find(Account, { user: me.user.id });
      if (accounts.length === 1 && !ctx.deps.cfg.SOCIAL_ALLOW_UNLINKING_ALL) throw SOCIAL_ERRORS.FAILED_TO_UNLINK_LAST_ACCOUNT();
      const target = accounts.find((a) => a.providerId === providerId && (!accountId || a.accountId === accountId));
      if (!target) throw SOCIAL_ERRORS.ACCOUNT_NOT_FOUND();
      await ctx.em.nativeDelete(Account, { id: target.id, user: me.user.id });
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/refresh-token',
    body: tokenQueryBody,
    handler: async (ctx) => {
      const { p, account } = await accountFor(ctx, ctx.body);
      const refresh = openToken(ctx.deps.cfg, account.refreshToken);
      if (!refresh) throw SOCIAL_ERRORS.NO_REFRESH(p.spec.id);
      let tokens: TokenSet;
      try {
        tokens = await refreshTokens(p, refresh);
      } catch (err) {
        ctx.deps.log.warn({ err, provider: p.spec.id, requestId: ctx.req.id }, 'provider token refresh failed');
        throw SOCIAL_ERRORS.FAILED_TO_REFRESH();
      }
      storeTokens(ctx.deps.cfg, account, tokens);
      await ctx.em.flush();
      return {
        tokenType: tokens.tokenType,
        idToken: tokens.idToken ?? undefined,
        accessToken: tokens.accessToken,
        refreshToken: tokens.refreshToken ?? refresh,
        accessTokenExpiresAt: tokens.accessTokenExpiresAt?.toISOString(),
        refreshTokenExpiresAt: (tokens.refreshTokenExpiresAt ?? account.refreshTokenExpiresAt)?.toISOString(),
        scopes: tokens.scopes.length ? tokens.scopes : account.scope ? account.scope.split(',') : [],
      };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/get-access-token',
    body: tokenQueryBody,
    handler: async (ctx) => {
      const { p, account } = await accountFor(ctx, ctx.body);
      const refresh = openToken(ctx.deps.cfg, account.refreshToken);
      const expiring = !account.accessTokenExpiresAt || account.accessTokenExpiresAt.getTime() - Date.now() < 5000;
      if (refresh && expiring) {
        try {
          storeTokens(ctx.deps.cfg, account, await refreshTokens(p, refresh));
          await ctx.em.flush();
        } catch (err) {
          ctx.deps.log.warn({ err, provider: p.spec.id, requestId: ctx.req.id }, 'provider token refresh failed');
          throw SOCIAL_ERRORS.FAILED_TO_GET_ACCESS_TOKEN();
        }
      }
      return {
        accessToken: openToken(ctx.deps.cfg, account.accessToken) ?? undefined,
        accessTokenExpiresAt: account.accessTokenExpiresAt?.toISOString(),
        scopes: account.scope ? account.scope.split(',') : [],
        idToken: openToken(ctx.deps.cfg, account.idToken) ?? undefined,
      };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/one-tap/callback',
    body: z.object({ idToken: z.string() }),
    handler: async (ctx) => {
      const p = provider(ctx, 'google');
      const profile = await profileFromIdToken(p, ctx.body.idToken);
      if (!profile) throw SOCIAL_ERRORS.INVALID_ID_TOKEN();
      if (!profile.email) return { error: 'Email not available in token' };
      const result = await userForProfile(ctx.deps, ctx.em, 'google', profile, { idToken: ctx.body.idToken, scopes: ['openid', 'profile', 'email'] }, {
        disableSignUp: ctx.deps.cfg.SOCIAL_DISABLE_IMPLICIT_SIGN_UP,
      });
      if (!result.ok) {
        if (result.error === 'account_not_linked') throw new AuthError(401, "Google sub doesn't match");
        if (result.error === 'signup_disabled') throw new AuthError(502, 'User not found');
        throw new AuthError(500, 'Could not create user');
      }
      const s = await signIn(ctx, result.user);
      return { token: s.token, user: userBody(serializeUser(result.user)) };
    },
  }),
];
