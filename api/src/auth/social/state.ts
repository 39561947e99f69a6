/**
 * OAuth state: a random 32-character value naming a server-side record (callback URLs, the 128-character
 * PKCE verifier, link target, requestSignUp) that lives 10 minutes and is used once, and bound to the
 * browser that started the flow by a signed, HttpOnly cookie. A callback whose state is unknown, expired,
 * already used, or not the one this browser's cookie names is refused.
 */
import type { Request, Response } from 'express';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { constantTimeEqual, sha256Hex } from '../../kit/crypto.ts';
import { open, seal } from '../../kit/secretbox.ts';
import { Verification } from '../entities.ts';
import { cookieNames, isSecure, parseCookies, signCookieValue, verifySignedValue } from '../sessions.ts';
import { randomString } from '../verification.ts';

export const STATE_TTL_SECONDS = 600;
const STATE_LENGTH = 32;
const VERIFIER_LENGTH = 128;
const VERIFIER_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~';

export interface OAuthState {
  /** The provider the flow was started with: its callback is the only one that may use the state. */
  providerId: string;
  callbackURL: string;
  codeVerifier: string;
  errorURL?: string;
  newUserURL?: string;
  link?: { email: string; userId: string };
  requestSignUp?: boolean;
  expiresAt: number;
}

const identifierOf = (state: string) => `oauth-state:${sha256Hex(state)}`;

function stateCookieName(cfg: Pick<Config, 'SECRET' | 'PUBLIC_URL'>): string {
  return cookieNames(cfg).token.replace('session_token', 'oauth_state');
}

function stateCookie(cfg: Pick<Config, 'SECRET' | 'PUBLIC_URL'>, value: string, maxAge: number): string {
  const parts = [`${stateCookieName(cfg)}=${encodeURIComponent(value)}`, `Max-Age=${maxAge}`, 'Path=/', 'HttpOnly', 'SameSite=Lax'];
  if (isSecure(cfg)) parts.push('Secure');
  return parts.join('; ');
}

/** Stores a new state and sets the browser's state cookie. */
export async function createState(
  em: EntityManager,
  cfg: Pick<Config, 'SECRET' | 'PUBLIC_URL'>,
  res: Response,
  data: Omit<OAuthState, 'codeVerifier' | 'expiresAt'>,
): Promise<{ state: string; codeVerifier: string }> {
  const state = randomString(STATE_LENGTH);
  const codeVerifier = randomString(VERIFIER_LENGTH, VERIFIER_ALPHABET);
  const expiresAt = Date.now() + STATE_TTL_SECONDS * 1000;
  const value: OAuthState = { ...data, codeVerifier, expiresAt };
  em.create(Verification, {
    identifier: identifierOf(state),
    value: seal(cfg.SECRET, 'oauth-state', JSON.stringify(value)),
    expiresAt: new Date(expiresAt),
  });
  await em.flush();
  res.append('Set-Cookie', stateCookie(cfg, signCookieValue(cfg.SECRET, state), STATE_TTL_SECONDS));
  return { state, codeVerifier };
}

export type StateOutcome = { status: 'ok'; value: OAuthState } | { status: 'mismatch' } | { status: 'invalid' };

/**
 * Uses a state up. `mismatch`: this browser did not start the flow (no state cookie, or another state);
 * the record is left for the browser that did. `invalid`: unknown, used or expired.
 */
export async function consumeState(
  em: EntityManager,
  cfg: Pick<Config, 'SECRET' | 'PUBLIC_URL'>,
  req: Request,
  res: Response,
  state: string,
): Promise<StateOutcome> {
  const signed = parseCookies(req.headers.cookie).get(stateCookieName(cfg));
  const bound = signed ? verifySignedValue(cfg.SECRET, signed) : null;
  if (!bound || !constantTimeEqual(bound, state)) return { status: 'mismatch' };
  res.append('Set-Cookie', stateCookie(cfg, '', 0));
  const v = await em.findOne(Verification, { identifier: identifierOf(state) });
  if (!v) return { status: 'invalid' };
  const claimed = await em.nativeDelete(Verification, { id: v.id });
  if (claimed !== 1 || v.expiresAt.getTime() <= Date.now()) return { status: 'invalid' };
  return { status: 'ok', value: JSON.parse(open(cfg.SECRET, 'oauth-state', v.value)) as OAuthState };
}
