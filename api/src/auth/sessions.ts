/**
 * Cookie sessions compatible with Better Auth.
 * - `better-auth.session_token` = `<token>.<HMAC-SHA256 base64>` (URL-encoded), HttpOnly, SameSite=Lax,
 *   Secure and `__Secure-` prefixed under HTTPS. Only the SHA-256 of the token is stored.
 * - `better-auth.session_data`: the cookie session cache, base64url JSON `{session, expiresAt, signature}`
 *   signed with the secret, alive 60 s, so get-session answers without a query on the hot path.
 * Sessions last 7 days and are extended on use once a day has passed since the last refresh; a session
 * is fresh for sensitive actions within a day of its creation or last refresh.
 */
import { createHmac } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Config } from '../config.ts';
import type { EntityManager } from '../kit/db.ts';
import { constantTimeEqual, hmacBase64, randomToken, sha256Hex } from '../kit/crypto.ts';
import type { UserPrincipal } from '../kit/principals.ts';
import { Session, type User } from './entities.ts';
import { AUTH_ERRORS } from './errors.ts';
import { serializeSession, serializeUser, type SessionPayload } from './serialize.ts';

export const SESSION_TTL_SECONDS = 7 * 24 * 3600;
/** A session is extended when this long has passed since it was created or last extended. */
export const SESSION_UPDATE_AGE_SECONDS = 24 * 3600;
/** Sensitive actions need a session created or refreshed this recently. */
export const SESSION_FRESH_AGE_SECONDS = 24 * 3600;
/** rememberMe: false sessions live this long and are never extended. */
export const SESSION_TTL_NOT_REMEMBERED_SECONDS = 24 * 3600;
export const COOKIE_CACHE_MAX_AGE_SECONDS = 60;
export const COOKIE_CACHE_MAX_LENGTH = 4093;

/** Every scope a signed-in user holds on their own behalf. */
export const USER_SCOPES = new Set(['web_default']);

const TOKEN_COOKIE = 'better-auth.session_token';
const DATA_COOKIE = 'better-auth.session_data';
const DONT_REMEMBER_COOKIE = 'better-auth.dont_remember';
export const SESSION_COOKIE = TOKEN_COOKIE;

export type CookieConfig = Pick<Config, 'SECRET' | 'PUBLIC_URL'>;

export function isSecure(cfg: CookieConfig): boolean {
  return cfg.PUBLIC_URL.startsWith('https:');
}

export function cookieNames(cfg: CookieConfig) {
  const prefix = isSecure(cfg) ? '__Secure-' : '';
  return { token: prefix + TOKEN_COOKIE, data: prefix + DATA_COOKIE, dontRemember: prefix + DONT_REMEMBER_COOKIE };
}

export function parseCookies(header: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!header) return out;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (out.has(name)) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      out.set(name, decodeURIComponent(raw));
    } catch {
      out.set(name, raw);
    }
  }
  return out;
}

export function signCookieValue(secret: string, token: string): string {
  return `${token}.${hmacBase64(secret, token)}`;
}

/** Verifies `<value>.<signature>` and returns the value, or null. */
export function verifySignedValue(secret: string, signed: string): string | null {
  const dot = signed.lastIndexOf('.');
  if (dot <= 0) return null;
  const value = signed.slice(0, dot);
  return constantTimeEqual(signed.slice(dot + 1), hmacBase64(secret, value)) ? value : null;
}

/** The session token from the signed cookie (either name), or null. */
export function readSignedCookie(cfg: CookieConfig, req: Request): string | null {
  return signedTokenOf(cfg, parseCookies(req.headers.cookie));
}

function signedTokenOf(cfg: CookieConfig, cookies: Map<string, string>): string | null {
  const signed = cookies.get(cookieNames(cfg).token) ?? cookies.get(TOKEN_COOKIE) ?? cookies.get(`__Secure-${TOKEN_COOKIE}`);
  return signed ? verifySignedValue(cfg.SECRET, signed) : null;
}

export function cookieString(cfg: CookieConfig, name: string, value: string, maxAge: number | undefined): string {
  const parts = [`${name}=${encodeURIComponent(value)}`];
  if (maxAge !== undefined) parts.push(`Max-Age=${maxAge}`);
  parts.push('Path=/', 'HttpOnly', 'SameSite=Lax');
  if (isSecure(cfg)) parts.push('Secure');
  return parts.join('; ');
}

function setCookie(res: Response, header: string) {
  res.append('Set-Cookie', header);
}

/** The cookie cache value: base64url JSON `{session, expiresAt, signature}` as Better Auth writes it. */
export function encodeCacheCookie(secret: string, payload: SessionPayload, now = Date.now()): string {
  const expiresAt = now + COOKIE_CACHE_MAX_AGE_SECONDS * 1000;
  const signature = createHmac('sha256', secret).update(JSON.stringify({ ...payload, expiresAt })).digest('base64url');
  return Buffer.from(JSON.stringify({ session: payload, expiresAt, signature })).toString('base64url');
}

/**
 * Decodes and verifies a cache cookie. The signature covers `JSON.stringify({...payload, expiresAt})`,
 * which is the payload's own JSON with `"expiresAt":N` appended: one stringify serves both the check
 * and the answer (`json`), and one HMAC is the only cryptography.
 */
export function decodeCacheCookie(
  secret: string,
  value: string,
): { payload: SessionPayload; expiresAt: number; json: string } | null {
  try {
    const data = JSON.parse(Buffer.from(value, 'base64url').toString('utf8')) as {
      session?: SessionPayload;
      expiresAt?: number;
      signature?: string;
    };
    if (!data || typeof data.session !== 'object' || data.session === null) return null;
    if (typeof data.expiresAt !== 'number' || typeof data.signature !== 'string') return null;
    const json = JSON.stringify(data.session);
    const signed = `${json.slice(0, -1)},"expiresAt":${JSON.stringify(data.expiresAt)}}`;
    const expected = createHmac('sha256', secret).update(signed).digest('base64url');
    if (!constantTimeEqual(data.signature, expected)) return null;
    return { payload: data.session, expiresAt: data.expiresAt, json };
  } catch {
    return null;
  }
}

/**
 * The cached session for a Cookie header, if the cache cookie is valid, unexpired and belongs to the
 * (validly signed) session token cookie; `json` is the answer's body.
 */
export function readCacheCookieHeader(
  cfg: CookieConfig,
  header: string | undefined,
  token?: string | null,
): { payload: SessionPayload; json: string } | null {
  const cookies = parseCookies(header);
  const value = cookies.get(cookieNames(cfg).data);
  if (!value) return null;
  const sessionToken = token ?? signedTokenOf(cfg, cookies);
  if (!sessionToken) return null;
  const cached = decodeCacheCookie(cfg.SECRET, value);
  if (!cached) return null;
  const now = Date.now();
  if (cached.expiresAt <= now) return null;
  const session = cached.payload.session as SessionPayload['session'] | undefined;
  if (!session || typeof session.token !== 'string' || !(Date.parse(session.expiresAt) > now)) return null;
  if (!constantTimeEqual(session.token, sessionToken)) return null;
  return { payload: cached.payload, json: cached.json };
}

/** The cached session, if the cache cookie is valid, unexpired and belongs to this session token. */
export function readCacheCookie(cfg: CookieConfig, req: Request, token: string): SessionPayload | null {
  return readCacheCookieHeader(cfg, req.headers.cookie, token)?.payload ?? null;
}

export function setCacheCookie(res: Response, cfg: CookieConfig, payload: SessionPayload) {
  const value = encodeCacheCookie(cfg.SECRET, payload);
  const name = cookieNames(cfg).data;
  // Too large to cache (a very long name or image URL): go without the cache rather than fail.
  if (value.length > COOKIE_CACHE_MAX_LENGTH) setCookie(res, cookieString(cfg, name, '', 0));
  else setCookie(res, cookieString(cfg, name, value, COOKIE_CACHE_MAX_AGE_SECONDS));
}

export interface LoadedSession {
  session: Session;
  user: User;
  token: string;
}

export function payloadOf(s: LoadedSession): SessionPayload {
  return { session: serializeSession(s.session, s.token), user: serializeUser(s.user) };
}

/** Sets the session token cookie and the cache cookie. */
export function setSessionCookies(res: Response, cfg: CookieConfig, s: LoadedSession) {
  const maxAge = s.session.rememberMe
    ? Math.max(0, Math.round((s.session.expiresAt.getTime() - Date.now()) / 1000))
    : undefined;
  setCookie(res, cookieString(cfg, cookieNames(cfg).token, signCookieValue(cfg.SECRET, s.token), maxAge));
  setCacheCookie(res, cfg, payloadOf(s));
}

export function clearSessionCookies(res: Response, cfg: CookieConfig) {
  const names = cookieNames(cfg);
  for (const name of [names.token, names.data, names.dontRemember]) setCookie(res, cookieString(cfg, name, '', 0));
}

export async function createSession(
  em: EntityManager,
  user: User,
  meta: { ipAddress?: string; userAgent?: string; rememberMe?: boolean; impersonatedBy?: string; ttlSeconds?: number },
): Promise<LoadedSession> {
  if (isBanned(user)) throw AUTH_ERRORS.BANNED_USER();
  const token = randomToken('', 32);
  const now = new Date();
  const rememberMe = meta.rememberMe !== false;
  const ttl = meta.ttlSeconds ?? (rememberMe ? SESSION_TTL_SECONDS : SESSION_TTL_NOT_REMEMBERED_SECONDS);
  const session = em.create(Session, {
    user,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(now.getTime() + ttl * 1000),
    updatedAt: now,
    rememberMe,
    ipAddress: meta.ipAddress ?? null,
    userAgent: meta.userAgent ?? null,
    activeOrganizationId: null,
    impersonatedBy: meta.impersonatedBy ?? null,
  });
  await em.flush();
  // Now and then, drop sessions that expired without being used again.
  if (Math.random() < 0.01) await em.nativeDelete(Session, { expiresAt: { $lt: new Date() } });
  return { token, session, user };
}

/** A ban in force (none, or one whose expiry has passed, is no ban). */
export function isBanned(user: Pick<User, 'banned' | 'banExpires'>, now = Date.now()): boolean {
  return !!user.banned && (!user.banExpires || user.banExpires.getTime() > now);
}

/** The live session for a raw token, its user loaded; an expired one is deleted and null returned. */
export async function findSession(em: EntityManager, token: string): Promise<Session | null> {
  const session = await em.findOne(Session, { tokenHash: sha256Hex(token) }, { populate: ['user'] });
  if (!session) return null;
  if (session.expiresAt.getTime() <= Date.now()) {
    await em.nativeDelete(Session, { id: session.id });
    return null;
  }
  return session;
}

/** Whether the session is due to be extended (a day since its last refresh; remembered sessions only). */
export function isDueForRefresh(session: Session, now = Date.now()): boolean {
  if (!session.rememberMe) return false;
  const refreshedAt = session.expiresAt.getTime() - SESSION_TTL_SECONDS * 1000;
  return now - refreshedAt >= SESSION_UPDATE_AGE_SECONDS * 1000;
}

export async function refreshSession(em: EntityManager, session: Session): Promise<void> {
  const now = new Date();
  session.expiresAt = new Date(now.getTime() + SESSION_TTL_SECONDS * 1000);
  session.updatedAt = now;
  await em.flush();
}

export function isFresh(session: Session, now = Date.now()): boolean {
  const last = (session.updatedAt ?? session.createdAt).getTime();
  return now - last < SESSION_FRESH_AGE_SECONDS * 1000;
}

export async function resolveSessionPrincipal(em: EntityManager, token: string): Promise<UserPrincipal | null> {
  const session = await findSession(em, token);
  return session ? { kind: 'user', userId: session.user.id, sessionId: session.id, scopes: USER_SCOPES } : null;
}

interface SessionRow {
  id: string;
  user_id: string;
  expires_at: Date | string;
  created_at: Date | string;
  updated_at: Date | string | null;
  remember_me: boolean;
  ip_address: string | null;
  user_agent: string | null;
  active_organization_id: string | null;
  u_created_at: Date | string;
  u_modified_at: Date | string | null;
  email: string;
  email_verified: boolean;
  name: string;
  image: string | null;
  username: string | null;
  display_username: string | null;
  two_factor_enabled: boolean;
  role: string;
  banned: boolean;
  ban_reason: string | null;
  ban_expires: Date | string | null;
  impersonated_by: string | null;
}

const toDate = (v: Date | string) => (v instanceof Date ? v : new Date(v));
const toDateOrNull = (v: Date | string | null) => (v === null ? null : toDate(v));

/**
 * The uncached get-session read without the ORM: one indexed query by token hash, the answer built from
 * the row. Returns `undefined` when the ORM path must decide instead (no such session, expired, or due
 * for a refresh): those delete or write and are rare; this is the common read.
 */
export async function readLiveSessionPayload(
  em: EntityManager,
  token: string,
  opts: { disableRefresh?: boolean },
): Promise<SessionPayload | undefined> {
  const rows = await em.getConnection().execute<SessionRow[]>(
    `select s.id, s.user_id, s.expires_at, s.created_at, s.updated_at, s.remember_me, s.ip_address, s.user_agent,
            s.active_organization_id, s.impersonated_by, u.created_at as u_created_at, u.modified_at as u_modified_at,
            u.email, u.email_verified, u.name, u.image, u.username, u.display_username, u.two_factor_enabled, u.role,
            u.banned, u.ban_reason, u.ban_expires
       from sessions s join users u on u.id = s.user_id
      where s.token_hash = ?`,
    [sha256Hex(token)],
  );
  const row = rows[0];
  if (!row) return undefined;
  // The same entity-shaped values the ORM would hydrate, through the same serializers.
  const user = {
    id: row.user_id,
    email: row.email,
    emailVerified: row.email_verified,
    name: row.name,
    image: row.image,
    createdAt: toDate(row.u_created_at),
    modifiedAt: toDateOrNull(row.u_modified_at),
    username: row.username,
    displayUsername: row.display_username,
    twoFactorEnabled: row.two_factor_enabled,
    role: row.role,
    banned: row.banned,
    banReason: row.ban_reason,
    banExpires: toDateOrNull(row.ban_expires),
  } as unknown as User;
  const session = {
    id: row.id,
    user,
    expiresAt: toDate(row.expires_at),
    createdAt: toDate(row.created_at),
    updatedAt: toDateOrNull(row.updated_at),
    rememberMe: row.remember_me,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    activeOrganizationId: row.active_organization_id,
    impersonatedBy: row.impersonated_by,
  } as unknown as Session;
  if (session.expiresAt.getTime() <= Date.now()) return undefined;
  if (!opts.disableRefresh && isDueForRefresh(session)) return undefined;
  return payloadOf({ session, user, token });
}
