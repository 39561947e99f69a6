/**
 * Two-factor rules: TOTP (RFC 6238, 6 digits, 30 s, one step of clock drift either way; a step is
 * accepted once), backup codes (10, `xxxxx-xxxxx`, stored as SHA-256, each good once), codes by mail
 * (6 digits, 3 minutes, 5 tries), the pending sign-in challenge (a signed `better-auth.two_factor`
 * cookie naming a 5-minute verification row) and the trusted-device cookie (30 days, renewed on every
 * sign-in it lets through). Failed code entries are also counted per user: 10 in 5 minutes, then 429.
 */
import { randomInt } from 'node:crypto';
import type { Request, Response } from 'express';
import * as OTPAuth from 'otpauth';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { constantTimeEqual, hmacBase64, randomToken, sha256Hex } from '../../kit/crypto.ts';
import { open, seal } from '../../kit/secretbox.ts';
import { Account, User, Verification } from '../entities.ts';
import { AUTH_ERRORS, AuthError } from '../errors.ts';
import { verifyPassword } from '../password.ts';
import { hit } from '../rate-limit.ts';
import { cookieString, isSecure, parseCookies, signCookieValue, verifySignedValue } from '../sessions.ts';
import { randomString } from '../verification.ts';
import { TwoFactor, TwoFactorBackupCode } from './entities.ts';

export const TOTP_PERIOD_SECONDS = 30;
export const TOTP_DIGITS = 6;
export const BACKUP_CODE_COUNT = 10;
export const OTP_TTL_SECONDS = 3 * 60;
export const OTP_ALLOWED_ATTEMPTS = 5;
export const CHALLENGE_TTL_SECONDS = 5 * 60;
export const TRUST_DEVICE_SECONDS = 30 * 24 * 3600;
/** Failed code entries per user before 429, and the window they are counted in. */
export const FAILED_CODES_MAX = 10;
export const FAILED_CODES_WINDOW_SECONDS = 5 * 60;
export const TOTP_ISSUER = 'Emporia';

const SECRET_PURPOSE = 'two-factor-totp';
const CHALLENGE_COOKIE = 'better-auth.two_factor';
const TRUST_COOKIE = 'better-auth.trust_device';

type Cfg = Pick<Config, 'SECRET' | 'PUBLIC_URL'>;

function cookieName(cfg: Cfg, base: string) {
  return (isSecure(cfg) ? '__Secure-' : '') + base;
}

function totpFor(secretBase32: string, label: string, issuer = TOTP_ISSUER) {
  return new OTPAuth.TOTP({
    issuer,
    label,
    algorithm: 'SHA1',
    digits: TOTP_DIGITS,
    period: TOTP_PERIOD_SECONDS,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  });
}

/** Checks the password of the user's credential account (400 Invalid password otherwise). */
export async function checkUserPassword(em: EntityManager, userId: string, password: string) {
  const account = await em.findOne(Account, { user: userId, providerId: 'credential' });
  if (!account?.password || !(await verifyPassword(password, account.password))) throw AUTH_ERRORS.INVALID_PASSWORD();
}

function newBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, () => {
    const c = randomString(10);
    return `${c.slice(0, 5)}-${c.slice(5)}`;
  });
}

/** Replaces the user's backup codes with fresh ones; returns them (the only time they are shown). */
export async function replaceBackupCodes(em: EntityManager, user: User): Promise<string[]> {
  const codes = newBackupCodes();
  await em.nativeDelete(TwoFactorBackupCode, { user: user.id });
  for (const code of codes) em.create(TwoFactorBackupCode, { user, codeHash: sha256Hex(code) });
  await em.flush();
  return codes;
}

/** A new TOTP secret (160 bits, sealed) and backup codes; two-factor is on once a first code is verified. */
export async function enrol(em: EntityManager, cfg: Cfg, user: User, issuer?: string) {
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  await em.nativeDelete(TwoFactor, { user: user.id });
  em.create(TwoFactor, { user, secretSealed: seal(cfg.SECRET, SECRET_PURPOSE, secret), lastTotpStep: null });
  await em.flush();
  const backupCodes = await replaceBackupCodes(em, user);
  return { totpURI: totpFor(secret, user.email, issuer).toString(), backupCodes };
}

export async function totpUri(em: EntityManager, cfg: Cfg, user: User): Promise<string | null> {
  const tf = await em.findOne(TwoFactor, { user: user.id });
  if (!tf) return null;
  return totpFor(open(cfg.SECRET, SECRET_PURPOSE, tf.secretSealed), user.email).toString();
}

export async function disable(em: EntityManager, user: User) {
  user.twoFactorEnabled = false;
  await em.flush();
  await em.nativeDelete(TwoFactor, { user: user.id });
  await em.nativeDelete(TwoFactorBackupCode, { user: user.id });
}

/** Counts one code entry for the user; over the limit it is refused before the code is looked at. */
export async function countAttempt(em: EntityManager, userId: string) {
  const retryAfter = await hit(em, `two-factor|${userId}`, FAILED_CODES_MAX, FAILED_CODES_WINDOW_SECONDS);
  if (retryAfter !== null) {
    const err = AUTH_ERRORS.TOO_MANY_REQUESTS();
    throw new AuthError(err.status, err.message, err.code, { 'X-Retry-After': String(retryAfter) });
  }
}

/**
 * Whether `code` is the user's current TOTP (one step of drift allowed). The step it matched is
 * recorded atomically, so the same code (or an older one) is refused the second time.
 */
export async function verifyTotp(em: EntityManager, cfg: Cfg, userId: string, code: string): Promise<'ok' | 'invalid' | 'none'> {
  const tf = await em.findOne(TwoFactor, { user: userId });
  if (!tf) return 'none';
  const secret = open(cfg.SECRET, SECRET_PURPOSE, tf.secretSealed);
  const now = Date.now();
  const delta = /^\d{6}$/.test(code) ? totpFor(secret, 'x').validate({ token: code, timestamp: now, window: 1 }) : null;
  if (delta === null) return 'invalid';
  const step = Math.floor(now / 1000 / TOTP_PERIOD_SECONDS) + delta;
  const claimed = await em.getConnection().execute<{ id: string }[]>(
    `update two_factors set last_totp_step = ?, modified_at = now()
      where id = ? and (last_totp_step is null or last_totp_step < ?) returning id`,
    [step, tf.id, step],
  );
  return claimed.length === 1 ? 'ok' : 'invalid';
}

/** Uses a backup code up (deleting it is the claim); false when it is not one of the user's. */
export async function useBackupCode(em: EntityManager, userId: string, code: string): Promise<boolean> {
  const deleted = await em.nativeDelete(TwoFactorBackupCode, { user: userId, codeHash: sha256Hex(code.trim()) });
  return deleted === 1;
}

export async function hasTwoFactor(em: EntityManager, userId: string): Promise<boolean> {
  return (await em.count(TwoFactor, { user: userId })) > 0;
}

// ---- mailed codes -----------------------------------------------------------------------------------

const otpIdentifier = (key: string) => `two-factor-otp:${sha256Hex(key)}`;

/** A new 6-digit code for this sign-in (or session), replacing any earlier one. */
export async function issueOtp(em: EntityManager, key: string): Promise<string> {
  const code = String(randomInt(0, 10 ** TOTP_DIGITS)).padStart(TOTP_DIGITS, '0');
  await em.nativeDelete(Verification, { identifier: otpIdentifier(key) });
  em.create(Verification, {
    identifier: otpIdentifier(key),
    value: JSON.stringify({ hash: sha256Hex(code), attempts: 0 }),
    expiresAt: new Date(Date.now() + OTP_TTL_SECONDS * 1000),
  });
  await em.flush();
  return code;
}

export async function checkOtp(em: EntityManager, key: string, code: string): Promise<'ok' | 'invalid' | 'expired' | 'exhausted'> {
  const v = await em.findOne(Verification, { identifier: otpIdentifier(key) });
  if (!v || v.expiresAt.getTime() <= Date.now()) {
    if (v) await em.nativeDelete(Verification, { id: v.id });
    return 'expired';
  }
  const value = JSON.parse(v.value) as { hash: string; attempts: number };
  if (value.attempts >= OTP_ALLOWED_ATTEMPTS) {
    await em.nativeDelete(Verification, { id: v.id });
    return 'exhausted';
  }
  if (constantTimeEqual(sha256Hex(code), value.hash)) {
    // Deleting is the claim: a code is good once.
    return (await em.nativeDelete(Verification, { id: v.id })) === 1 ? 'ok' : 'expired';
  }
  await em.nativeUpdate(Verification, { id: v.id }, { value: JSON.stringify({ ...value, attempts: value.attempts + 1 }) });
  return 'invalid';
}

// ---- the pending sign-in ----------------------------------------------------------------------------

export interface Challenge {
  /** The random identifier the cookie carries (also keys the mailed code). */
  key: string;
  userId: string;
  rememberMe: boolean;
}

const challengeIdentifier = (key: string) => `two-factor:${sha256Hex(key)}`;

/** Starts a pending sign-in: no session, a signed short-lived cookie naming it. */
export async function startChallenge(em: EntityManager, cfg: Cfg, res: Response, user: User, rememberMe: boolean) {
  const key = randomToken('', 24);
  em.create(Verification, {
    identifier: challengeIdentifier(key),
    value: JSON.stringify({ userId: user.id, rememberMe }),
    expiresAt: new Date(Date.now() + CHALLENGE_TTL_SECONDS * 1000),
  });
  await em.flush();
  res.append('Set-Cookie', cookieString(cfg, cookieName(cfg, CHALLENGE_COOKIE), signCookieValue(cfg.SECRET, key), CHALLENGE_TTL_SECONDS));
}

/** The pending sign-in the request's cookie names, if it is live. */
export async function readChallenge(em: EntityManager, cfg: Cfg, req: Request): Promise<Challenge | null> {
  const signed = parseCookies(req.headers.cookie).get(cookieName(cfg, CHALLENGE_COOKIE));
  const key = signed ? verifySignedValue(cfg.SECRET, signed) : null;
  if (!key) return null;
  const v = await em.findOne(Verification, { identifier: challengeIdentifier(key) });
  if (!v || v.expiresAt.getTime() <= Date.now()) return null;
  const value = JSON.parse(v.value) as { userId: string; rememberMe: boolean };
  return { key, ...value };
}

/** Ends a pending sign-in once its second factor passed (deleting it is the claim). */
export async function endChallenge(em: EntityManager, cfg: Cfg, res: Response, challenge: Challenge): Promise<boolean> {
  res.append('Set-Cookie', cookieString(cfg, cookieName(cfg, CHALLENGE_COOKIE), '', 0));
  return (await em.nativeDelete(Verification, { identifier: challengeIdentifier(challenge.key) })) === 1;
}

// ---- trusted devices --------------------------------------------------------------------------------

/** Marks this browser as trusted for the user for 30 days. */
export function trustDevice(cfg: Cfg, res: Response, userId: string) {
  const expires = Math.floor(Date.now() / 1000) + TRUST_DEVICE_SECONDS;
  const value = `${userId}!${expires}!${randomToken('', 16)}`;
  const signed = `${value}.${hmacBase64(cfg.SECRET, `trust-device:${value}`)}`;
  res.append('Set-Cookie', cookieString(cfg, cookieName(cfg, TRUST_COOKIE), signed, TRUST_DEVICE_SECONDS));
}

/** Whether the browser holds a live trust cookie for this user. */
export function isTrustedDevice(cfg: Cfg, req: Request, userId: string): boolean {
  const raw = parseCookies(req.headers.cookie).get(cookieName(cfg, TRUST_COOKIE));
  if (!raw) return false;
  const dot = raw.lastIndexOf('.');
  if (dot <= 0) return false;
  const value = raw.slice(0, dot);
  if (!constantTimeEqual(raw.slice(dot + 1), hmacBase64(cfg.SECRET, `trust-device:${value}`))) return false;
  const [owner, expires] = value.split('!');
  return owner === userId && Number(expires) * 1000 > Date.now();
}
