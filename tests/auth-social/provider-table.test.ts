/**
 * Each of the 18 provider entries builds the authorization URL its provider documents: endpoint, client
 * id parameter, redirect URI, state, scopes (and how they are joined), PKCE where the provider takes it,
 * and the provider-specific parameters (Apple's form post, Twitch's claims, TikTok's client_key, …).
 */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.ts';
import { authorizationUrl, configuredProvider, configuredProviderIds } from '../../api/src/auth/social/engine.ts';
import { SOCIAL_PROVIDER_IDS } from '../../api/src/auth/social/providers.ts';
import { createHash } from 'node:crypto';

const REDIRECT = 'https://shop.example.com/api/auth/callback';
const STATE = 'abcdefghijklmnopqrstuvwxyz012345';
const VERIFIER = 'v'.repeat(128);
const CHALLENGE = createHash('sha256').update(VERIFIER).digest('base64url');

interface Documented {
  endpoint: string;
  scope: string;
  pkce: boolean;
  clientIdParam?: string;
  extra?: Record<string, string>;
}

/** From each provider's OAuth documentation. */
const DOCUMENTED: Record<(typeof SOCIAL_PROVIDER_IDS)[number], Documented> = {
  apple: { endpoint: 'https://appleid.apple.com/auth/authorize', scope: 'email name', pkce: false, extra: { response_mode: 'form_post' } },
  discord: { endpoint: 'https://discord.com/oauth2/authorize', scope: 'identify email', pkce: false },
  facebook: { endpoint: 'https://www.facebook.com/v21.0/dialog/oauth', scope: 'email public_profile', pkce: false },
  github: { endpoint: 'https://github.com/login/oauth/authorize', scope: 'read:user user:email', pkce: false },
  microsoft: {
    endpoint: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
    scope: 'openid profile email User.Read offline_access',
    pkce: true,
  },
  google: { endpoint: 'https://accounts.google.com/o/oauth2/v2/auth', scope: 'openid email profile', pkce: true },
  spotify: { endpoint: 'https://accounts.spotify.com/authorize', scope: 'user-read-email', pkce: true },
  twitch: { endpoint: 'https://id.twitch.tv/oauth2/authorize', scope: 'openid user:read:email', pkce: false },
  twitter: { endpoint: 'https://x.com/i/oauth2/authorize', scope: 'users.read tweet.read offline.access users.email', pkce: true },
  dropbox: { endpoint: 'https://www.dropbox.com/oauth2/authorize', scope: 'account_info.read', pkce: true, extra: { token_access_type: 'offline' } },
  kick: { endpoint: 'https://id.kick.com/oauth/authorize', scope: 'user:read', pkce: true },
  linkedin: { endpoint: 'https://www.linkedin.com/oauth/v2/authorization', scope: 'openid profile email', pkce: false },
  gitlab: { endpoint: 'https://gitlab.com/oauth/authorize', scope: 'read_user', pkce: true },
  tiktok: { endpoint: 'https://www.tiktok.com/v2/auth/authorize/', scope: 'user.info.profile', pkce: false, clientIdParam: 'client_key' },
  reddit: { endpoint: 'https://www.reddit.com/api/v1/authorize', scope: 'identity', pkce: false, extra: { duration: 'permanent' } },
  roblox: { endpoint: 'https://apis.roblox.com/oauth/v1/authorize', scope: 'openid profile', pkce: true },
  vk: { endpoint: 'https://id.vk.com/authorize', scope: 'email phone', pkce: true },
  zoom: { endpoint: 'https://zoom.us/oauth/authorize', scope: '', pkce: true },
};

const env = Object.fromEntries(SOCIAL_PROVIDER_IDS.map((id) => [`${id.toUpperCase()}_CLIENT_ID`, `client-of-${id}`]));
const cfg = loadConfig(env);

describe('provider table', () => {
  it('lists the 18 providers of the spec, each configured by its client id', () => {
    expect([...SOCIAL_PROVIDER_IDS].sort()).toEqual(Object.keys(DOCUMENTED).sort());
    expect(SOCIAL_PROVIDER_IDS).toHaveLength(18);
    expect(configuredProviderIds(cfg)).toEqual([...SOCIAL_PROVIDER_IDS]);
    expect(configuredProviderIds(loadConfig({ DISCORD_CLIENT_ID: 'x' }))).toEqual(['discord']);
    expect(configuredProvider(loadConfig({}), 'google')).toBeNull();
  });

  it.each(SOCIAL_PROVIDER_IDS.map((id) => [id]))('%s builds its documented authorization URL', (id) => {
    const doc = DOCUMENTED[id];
    const p = configuredProvider(cfg, id)!;
    const url = authorizationUrl(p, { state: STATE, codeVerifier: VERIFIER, redirectUri: `${REDIRECT}/${id}`, scopes: ['extra.scope'] });
    expect(`${url.origin}${url.pathname}`).toBe(doc.endpoint);
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get(doc.clientIdParam ?? 'client_id')).toBe(`client-of-${id}`);
    if (doc.clientIdParam) expect(url.searchParams.has('client_id')).toBe(false);
    expect(url.searchParams.get('redirect_uri')).toBe(`${REDIRECT}/${id}`);
    expect(url.searchParams.get('state')).toBe(STATE);
    const joiner = id === 'tiktok' ? ',' : ' ';
    expect(url.searchParams.get('scope')).toBe([doc.scope, 'extra.scope'].filter(Boolean).join(joiner));
    if (doc.pkce) {
      expect(url.searchParams.get('code_challenge_method')).toBe('S256');
      expect(url.searchParams.get('code_challenge')).toBe(CHALLENGE);
    } else {
      expect(url.searchParams.has('code_challenge')).toBe(false);
    }
    for (const [k, v] of Object.entries(doc.extra ?? {})) expect(url.searchParams.get(k)).toBe(v);
  });

  it('asks Twitch for the e-mail claims in the id token', () => {
    const url = authorizationUrl(configuredProvider(cfg, 'twitch')!, { state: STATE, codeVerifier: VERIFIER, redirectUri: REDIRECT });
    expect(JSON.parse(url.searchParams.get('claims')!)).toEqual({
      id_token: { email: null, email_verified: null, preferred_username: null, picture: null },
    });
  });

  it('uses endpoint overrides from SOCIAL_PROVIDER_ENDPOINTS', () => {
    const local = loadConfig({
      GITLAB_CLIENT_ID: 'x',
      SOCIAL_PROVIDER_ENDPOINTS: JSON.stringify({ gitlab: { authorization: 'https://git.internal.example/oauth/authorize' } }),
    });
    const url = authorizationUrl(configuredProvider(local, 'gitlab')!, { state: STATE, codeVerifier: VERIFIER, redirectUri: REDIRECT });
    expect(`${url.origin}${url.pathname}`).toBe('https://git.internal.example/oauth/authorize');
    expect(() => loadConfig({ SOCIAL_PROVIDER_ENDPOINTS: '{"myspace":{}}' })).toThrow(/SOCIAL_PROVIDER_ENDPOINTS/);
  });
});
