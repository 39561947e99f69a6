// Over 400 lines: a data table of the social providers, one entry each.
/**
 * The social providers of the auth service as data: where each one's authorization, token, user-info
 * and key-set endpoints are, its default scopes, whether it takes PKCE, whether an id token can sign in
 * directly, and how its profile maps to a user (id, name, email, image, emailVerified). The generic
 * engine (`engine.ts`) runs every flow from these entries.
 */

import { SOCIAL_PROVIDER_IDS, type SocialProviderId } from './ids.ts';

export { SOCIAL_PROVIDER_IDS, type SocialProviderId };

export interface SocialProfile {
  id: string;
  name: string;
  email: string | null;
  image: string | null;
  emailVerified: boolean;
}

type Raw = Record<string, any>;

export interface ProviderEndpoints {
  authorization: string;
  token: string;
  /** Where the profile is read with the access token; absent when the id token carries it. */
  userinfo?: string;
  /** The key set id tokens are verified against. */
  jwks?: string;
  /** The `iss` of its id tokens (`{tenantid}` is any tenant). */
  issuer?: string;
}

export interface ProviderSpec {
  id: SocialProviderId;
  name: string;
  endpoints: ProviderEndpoints;
  scopes: string[];
  /** How scopes are joined in the authorization URL. */
  scopeJoiner?: string;
  /** Sends an S256 code challenge (and the verifier with the code). */
  pkce: boolean;
  /** Extra query parameters of the authorization URL. */
  authParams?: Record<string, string>;
  /** The name of the client id parameter (TikTok calls it `client_key`). */
  clientIdParam?: string;
  /** How the client authenticates at the token endpoint: HTTP Basic (default) or in the form body. */
  clientAuth?: 'basic' | 'post';
  /** The profile comes from the id token's claims (OpenID Connect) rather than a user-info call. */
  profileFromIdToken?: boolean;
  /** `POST /sign-in/social` accepts `idToken` for this provider (verified against `endpoints.jwks`). */
  idTokenSignIn?: boolean;
  /** The user-info call is a POST (Dropbox, VK). */
  userinfoMethod?: 'GET' | 'POST';
  /** Extra reads after the user-info call (GitHub's e-mail list). */
  extraProfile?: (accessToken: string, raw: Raw, endpoints: ProviderEndpoints) => Promise<Raw>;
  profile: (raw: Raw) => SocialProfile;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

/** OpenID Connect standard claims. */
const oidcProfile = (p: Raw): SocialProfile => ({
  id: String(p.sub),
  name: str(p.name) ?? str(p.preferred_username) ?? '',
  email: str(p.email),
  image: str(p.picture),
  emailVerified: p.email_verified === true || p.email_verified === 'true',
});

async function getJson(url: string, accessToken: string): Promise<Raw> {
  const res = await fetch(url, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'emporia' },
  });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return (await res.json()) as Raw;
}

export const PROVIDERS: Record<SocialProviderId, ProviderSpec> = {
  apple: {
    id: 'apple',
    name: 'Apple',
    endpoints: {
      authorization: 'https://appleid.apple.com/auth/authorize',
      token: 'https://appleid.apple.com/auth/token',
      jwks: 'https://appleid.apple.com/auth/keys',
      issuer: 'https://appleid.apple.com',
    },
    scopes: ['email', 'name'],
    pkce: false,
    // The name comes only in the form post of the first sign-in (`user`), so Apple posts the callback.
    authParams: { response_mode: 'form_post' },
    clientAuth: 'post',
    profileFromIdToken: true,
    idTokenSignIn: true,
    profile: (p) => {
      const name = p.user?.name ? [p.user.name.firstName, p.user.name.lastName].filter(Boolean).join(' ') : '';
      return {
        id: String(p.sub),
        name,
        email: str(p.email),
        image: null,
        emailVerified: p.email_verified === true || p.email_verified === 'true',
      };
    },
  },
  discord: {
    id: 'discord',
    name: 'Discord',
    endpoints: {
      authorization: 'https://discord.com/oauth2/authorize',
      token: 'https://discord.com/api/oauth2/token',
      userinfo: 'https://discord.com/api/users/@me',
    },
    scopes: ['identify', 'email'],
    pkce: false,
    authParams: { prompt: 'none' },
    profile: (p) => ({
      id: String(p.id),
      name: str(p.global_name) ?? str(p.username) ?? '',
      email: str(p.email),
      image: p.avatar
        ? `https://cdn.discordapp.com/avatars/${p.id}/${p.avatar}.${String(p.avatar).startsWith('a_') ? 'gif' : 'png'}`
        : null,
      emailVerified: p.verified === true,
    }),
  },
  facebook: {
    id: 'facebook',
    name: 'Facebook',
    endpoints: {
      authorization: 'https://www.facebook.com/v21.0/dialog/oauth',
      token: 'https://graph.facebook.com/v21.0/oauth/access_token',
      userinfo: 'https://graph.facebook.com/me?fields=id,name,email,picture',
      jwks: 'https://limited.facebook.com/.well-known/oauth/openid/jwks/',
      issuer: 'https://www.facebook.com',
    },
    scopes: ['email', 'public_profile'],
    pkce: false,
    clientAuth: 'post',
    idTokenSignIn: true,
    profile: (p) =>
      p.sub !== undefined
        ? { ...oidcProfile(p), emailVerified: Boolean(p.email) }
        : {
            id: String(p.id),
            name: str(p.name) ?? '',
            email: str(p.email),
            image: str(p.picture?.data?.url),
            // Facebook only hands out confirmed addresses.
            emailVerified: Boolean(p.email),
          },
  },
  github: {
    id: 'github',
    name: 'GitHub',
    endpoints: {
      authorization: 'https://github.com/login/oauth/authorize',
      token: 'https://github.com/login/oauth/access_token',
      userinfo: 'https://api.github.com/user',
    },
    scopes: ['read:user', 'user:email'],
    pkce: false,
    async extraProfile(accessToken, raw, endpoints) {
      const emailsUrl = new URL('/user/emails', endpoints.userinfo).href;
      const emails = (await getJson(emailsUrl, accessToken).catch(() => [])) as unknown as Raw[]; // ignore: the list only adds an address to the profile's own
      const list = Array.isArray(emails) ? emails : [];
      const chosen = list.find((e) => e.primary) ?? list.find((e) => e.email === raw.email) ?? list[0];
      return { ...raw, email: raw.email ?? chosen?.email ?? null, email_verified: Boolean(chosen?.verified) };
    },
    profile: (p) => ({
      id: String(p.id),
      name: str(p.name) ?? str(p.login) ?? '',
      email: str(p.email),
      image: str(p.avatar_url),
      emailVerified: p.email_verified === true,
    }),
  },
  microsoft: {
    id: 'microsoft',
    name: 'Microsoft',
    endpoints: {
      authorization: 'https://login.microsoftonline.com/common/oauth2/v2.0/authorize',
      token: 'https://login.microsoftonline.com/common/oauth2/v2.0/token',
      jwks: 'https://login.microsoftonline.com/common/discovery/v2.0/keys',
      issuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
    },
    scopes: ['openid', 'profile', 'email', 'User.Read', 'offline_access'],
    pkce: true,
    profileFromIdToken: true,
    idTokenSignIn: true,
    // Entra ID vouches for the addresses of its accounts.
    profile: (p) => ({ ...oidcProfile(p), emailVerified: Boolean(p.email) }),
  },
  google: {
    id: 'google',
    name: 'Google',
    endpoints: {
      authorization: 'https://accounts.google.com/o/oauth2/v2/auth',
      token: 'https://oauth2.googleapis.com/token',
      userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
      jwks: 'https://www.googleapis.com/oauth2/v3/certs',
      issuer: 'https://accounts.google.com',
    },
    scopes: ['openid', 'email', 'profile'],
    pkce: true,
    profileFromIdToken: true,
    idTokenSignIn: true,
    profile: oidcProfile,
  },
  spotify: {
    id: 'spotify',
    name: 'Spotify',
    endpoints: {
      authorization: 'https://accounts.spotify.com/authorize',
      token: 'https://accounts.spotify.com/api/token',
      userinfo: 'https://api.spotify.com/v1/me',
    },
    scopes: ['user-read-email'],
    pkce: true,
    profile: (p) => ({
      id: String(p.id),
      name: str(p.display_name) ?? '',
      email: str(p.email),
      image: str(p.images?.[0]?.url),
      emailVerified: false,
    }),
  },
  twitch: {
    id: 'twitch',
    name: 'Twitch',
    endpoints: {
      authorization: 'https://id.twitch.tv/oauth2/authorize',
      token: 'https://id.twitch.tv/oauth2/token',
      userinfo: 'https://id.twitch.tv/oauth2/userinfo',
      jwks: 'https://id.twitch.tv/oauth2/keys',
      issuer: 'https://id.twitch.tv/oauth2',
    },
    scopes: ['openid', 'user:read:email'],
    pkce: false,
    clientAuth: 'post',
    // Twitch puts these claims in the id token only when asked for.
    authParams: {
      claims: JSON.stringify({ id_token: { email: null, email_verified: null, preferred_username: null, picture: null } }),
    },
    profileFromIdToken: true,
    profile: (p) => ({ ...oidcProfile(p), name: str(p.preferred_username) ?? '' }),
  },
  twitter: {
    id: 'twitter',
    name: 'X (Twitter)',
    endpoints: {
      authorization: 'https://x.com/i/oauth2/authorize',
      token: 'https://api.x.com/2/oauth2/token',
      userinfo: 'https://api.x.com/2/users/me?user.fields=profile_image_url,confirmed_email',
    },
    scopes: ['users.read', 'tweet.read', 'offline.access', 'users.email'],
    pkce: true,
    profile: (p) => ({
      id: String(p.data?.id),
      name: str(p.data?.name) ?? str(p.data?.username) ?? '',
      email: str(p.data?.confirmed_email) ?? str(p.data?.email),
      image: str(p.data?.profile_image_url),
      emailVerified: Boolean(p.data?.confirmed_email),
    }),
  },
  dropbox: {
    id: 'dropbox',
    name: 'Dropbox',
    endpoints: {
      authorization: 'https://www.dropbox.com/oauth2/authorize',
      token: 'https://api.dropboxapi.com/oauth2/token',
      userinfo: 'https://api.dropboxapi.com/2/users/get_current_account',
    },
    scopes: ['account_info.read'],
    pkce: true,
    authParams: { token_access_type: 'offline' },
    userinfoMethod: 'POST',
    profile: (p) => ({
      id: String(p.account_id),
      name: str(p.name?.display_name) ?? '',
      email: str(p.email),
      image: str(p.profile_photo_url),
      emailVerified: p.email_verified === true,
    }),
  },
  kick: {
    id: 'kick',
    name: 'Kick',
    endpoints: {
      authorization: 'https://id.kick.com/oauth/authorize',
      token: 'https://id.kick.com/oauth/token',
      userinfo: 'https://api.kick.com/public/v1/users',
    },
    scopes: ['user:read'],
    pkce: true,
    clientAuth: 'post',
    profile: (raw) => {
      const p = (raw.data?.[0] ?? raw) as Raw;
      return {
        id: String(p.user_id),
        name: str(p.name) ?? '',
        email: str(p.email),
        image: str(p.profile_picture),
        // Kick requires a confirmed address to hold an account.
        emailVerified: Boolean(p.email),
      };
    },
  },
  linkedin: {
    id: 'linkedin',
    name: 'LinkedIn',
    endpoints: {
      authorization: 'https://www.linkedin.com/oauth/v2/authorization',
      token: 'https://www.linkedin.com/oauth/v2/accessToken',
      userinfo: 'https://api.linkedin.com/v2/userinfo',
    },
    scopes: ['openid', 'profile', 'email'],
    pkce: false,
    clientAuth: 'post',
    profile: oidcProfile,
  },
  gitlab: {
    id: 'gitlab',
    name: 'GitLab',
    endpoints: {
      authorization: 'https://gitlab.com/oauth/authorize',
      token: 'https://gitlab.com/oauth/token',
      userinfo: 'https://gitlab.com/api/v4/user',
    },
    scopes: ['read_user'],
    pkce: true,
    profile: (p) => ({
      id: String(p.id),
      name: str(p.name) ?? str(p.username) ?? '',
      email: str(p.email),
      image: str(p.avatar_url),
      // GitLab's `email` is the confirmed primary address.
      emailVerified: Boolean(p.email) && p.confirmed_at !== null,
    }),
  },
  tiktok: {
    id: 'tiktok',
    name: 'TikTok',
    endpoints: {
      authorization: 'https://www.tiktok.com/v2/auth/authorize/',
      token: 'https://open.tiktokapis.com/v2/oauth/token/',
      userinfo: 'https://open.tiktokapis.com/v2/user/info/?fields=open_id,avatar_large_url,display_name,username',
    },
    scopes: ['user.info.profile'],
    scopeJoiner: ',',
    pkce: false,
    clientIdParam: 'client_key',
    clientAuth: 'post',
    // TikTok shares no e-mail address: sign-in ends with `email_not_found` unless a profile carries one.
    profile: (p) => ({
      id: String(p.data?.user?.open_id),
      name: str(p.data?.user?.display_name) ?? str(p.data?.user?.username) ?? '',
      email: str(p.data?.user?.email),
      image: str(p.data?.user?.avatar_large_url),
      emailVerified: false,
    }),
  },
  reddit: {
    id: 'reddit',
    name: 'Reddit',
    endpoints: {
      authorization: 'https://www.reddit.com/api/v1/authorize',
      token: 'https://www.reddit.com/api/v1/access_token',
      userinfo: 'https://oauth.reddit.com/api/v1/me',
    },
    scopes: ['identity'],
    pkce: false,
    authParams: { duration: 'permanent' },
    // Reddit shares no e-mail address: sign-in ends with `email_not_found` unless a profile carries one.
    profile: (p) => ({
      id: String(p.id),
      name: str(p.name) ?? '',
      email: str(p.email),
      image: str(p.icon_img)?.split('?')[0] ?? null,
      emailVerified: p.has_verified_email === true && Boolean(p.email),
    }),
  },
  roblox: {
    id: 'roblox',
    name: 'Roblox',
    endpoints: {
      authorization: 'https://apis.roblox.com/oauth/v1/authorize',
      token: 'https://apis.roblox.com/oauth/v1/token',
      userinfo: 'https://apis.roblox.com/oauth/v1/userinfo',
    },
    scopes: ['openid', 'profile'],
    pkce: true,
    authParams: { prompt: 'select_account consent' },
    // Roblox shares no e-mail address: sign-in ends with `email_not_found` unless a profile carries one.
    profile: (p) => ({ ...oidcProfile(p), name: str(p.nickname) ?? str(p.preferred_username) ?? '' }),
  },
  vk: {
    id: 'vk',
    name: 'VK ID',
    endpoints: {
      authorization: 'https://id.vk.com/authorize',
      token: 'https://id.vk.com/oauth2/auth',
      userinfo: 'https://id.vk.com/oauth2/user_info',
    },
    scopes: ['email', 'phone'],
    pkce: true,
    clientAuth: 'post',
    userinfoMethod: 'POST',
    profile: (raw) => {
      const p = (raw.user ?? raw) as Raw;
      return {
        id: String(p.user_id),
        name: [p.first_name, p.last_name].filter(Boolean).join(' '),
        email: str(p.email),
        image: str(p.avatar),
        // VK ID confirms the addresses it shares.
        emailVerified: Boolean(p.email),
      };
    },
  },
  zoom: {
    id: 'zoom',
    name: 'Zoom',
    endpoints: {
      authorization: 'https://zoom.us/oauth/authorize',
      token: 'https://zoom.us/oauth/token',
      userinfo: 'https://api.zoom.us/v2/users/me',
    },
    scopes: [],
    pkce: true,
    profile: (p) => ({
      id: String(p.id),
      name: str(p.display_name) ?? [p.first_name, p.last_name].filter(Boolean).join(' '),
      email: str(p.email),
      image: str(p.pic_url),
      emailVerified: Boolean(p.verified),
    }),
  },
};

export function isProviderId(v: string): v is SocialProviderId {
  return (SOCIAL_PROVIDER_IDS as readonly string[]).includes(v);
}
