/**
 * Users and linked accounts from a provider's profile: find the account, or link it to the user with
 * the same e-mail (only when the provider is trusted or vouches for the address), or sign the user up.
 * Provider tokens are stored sealed (AES-256-GCM under a key derived from SECRET).
 */
import type { Config } from '../../config.ts';
import type { Deps } from '../../deps.ts';
import type { EntityManager } from '../../kit/db.ts';
import { open, seal } from '../../kit/secretbox.ts';
import { Account, User } from '../entities.ts';
import { syncCustomerForUser } from '../payments-sync.ts';
import type { TokenSet } from './engine.ts';
import type { SocialProfile, SocialProviderId } from './providers.ts';

const PURPOSE = 'account-token';

export function sealToken(cfg: Pick<Config, 'SECRET'>, value: string | null | undefined): string | null {
  return value ? seal(cfg.SECRET, PURPOSE, value) : null;
}

export function openToken(cfg: Pick<Config, 'SECRET'>, value: string | null | undefined): string | null {
  if (!value) return null;
  try {
    return open(cfg.SECRET, PURPOSE, value);
  } catch {
    return null;
  }
}

/** Writes a token set onto an account (only the values the provider gave). */
export function storeTokens(cfg: Pick<Config, 'SECRET'>, account: Account, tokens: Partial<TokenSet>) {
  if (tokens.accessToken) account.accessToken = sealToken(cfg, tokens.accessToken);
  if (tokens.refreshToken) account.refreshToken = sealToken(cfg, tokens.refreshToken);
  if (tokens.idToken) account.idToken = sealToken(cfg, tokens.idToken);
  if (tokens.accessTokenExpiresAt !== undefined) account.accessTokenExpiresAt = tokens.accessTokenExpiresAt;
  if (tokens.refreshTokenExpiresAt) account.refreshTokenExpiresAt = tokens.refreshTokenExpiresAt;
  if (tokens.scopes?.length) account.scope = tokens.scopes.join(',');
}

export function isTrustedProvider(cfg: Pick<Config, 'SOCIAL_TRUSTED_PROVIDERS'>, id: string): boolean {
  return (cfg.SOCIAL_TRUSTED_PROVIDERS as string[]).includes(id);
}

export type ProfileOutcome =
  | { ok: true; user: User; isRegister: boolean }
  | { ok: false; error: 'account_not_linked' | 'signup_disabled' | 'unable_to_create_user' | 'email_not_found' };

/** The user a provider profile signs in (creating or linking as allowed), with the tokens stored. */
export async function userForProfile(
  deps: Deps,
  em: EntityManager,
  providerId: SocialProviderId,
  profile: SocialProfile,
  tokens: Partial<TokenSet>,
  opts: { disableSignUp: boolean },
): Promise<ProfileOutcome> {
  const { cfg } = deps;
  if (!profile.email) return { ok: false, error: 'email_not_found' };
  const email = profile.email.trim().toLowerCase();
  const account = await em.findOne(Account, { providerId, accountId: profile.id }, { populate: ['user'] });
  if (account) {
    storeTokens(cfg, account, tokens);
    await em.flush();
    return { ok: true, user: account.user, isRegister: false };
  }
  const existing = await em.findOne(User, { email });
  if (existing) {
    if (!isTrustedProvider(cfg, providerId) && !profile.emailVerified) return { ok: false, error: 'account_not_linked' };
    const linked = em.create(Account, { user: existing, providerId, accountId: profile.id });
    storeTokens(cfg, linked, tokens);
    await em.flush();
    return { ok: true, user: existing, isRegister: false };
  }
  if (opts.disableSignUp) return { ok: false, error: 'signup_disabled' };
  try {
    const user = em.create(User, {
      email,
      emailVerified: profile.emailVerified,
      name: profile.name || email,
      image: profile.image,
      username: null,
      displayUsername: null,
    });
    const created = em.create(Account, { user, providerId, accountId: profile.id });
    storeTokens(cfg, created, tokens);
    await em.flush();
    await syncCustomerForUser(deps, user);
    return { ok: true, user, isRegister: true };
  } catch (err) {
    deps.log.error({ err, providerId }, 'social sign-up failed');
    em.clear();
    return { ok: false, error: 'unable_to_create_user' };
  }
}
