/** Cookie sessions compatible with Better Auth: cookie `better-auth.session_token` = `<token>.<HMAC>`. */
import type { Request, Response } from 'express';
import type { EntityManager } from '../kit/db.ts';
import { constantTimeEqual, hmacBase64, randomToken, sha256Hex } from '../kit/crypto.ts';
import type { UserPrincipal } from '../kit/principals.ts';
import { Session, type User } from './entities.ts';

export const SESSION_COOKIE = 'better-auth.session_token';
export const SESSION_TTL_SECONDS = 7 * 24 * 3600;

/** Every scope a signed-in user holds on their own behalf. */
export const USER_SCOPES = new Set(['web_default']);

export function signCookieValue(secret: string, token: string): string {
  return `${token}.${hmacBase64(secret, token)}`;
}

export function readSignedCookie(secret: string, req: Request): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name !== SESSION_COOKIE) continue;
    const value = decodeURIComponent(rest.join('='));
    const dot = value.lastIndexOf('.');
    if (dot <= 0) return null;
    const token = value.slice(0, dot);
    return constantTimeEqual(value.slice(dot + 1), hmacBase64(secret, token)) ? token : null;
  }
  return null;
}

export function setSessionCookie(res: Response, secret: string, token: string, secure: boolean, maxAge?: number) {
  const parts = [
    `${SESSION_COOKIE}=${encodeURIComponent(signCookieValue(secret, token))}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (maxAge !== undefined) parts.push(`Max-Age=${maxAge}`);
  if (secure) parts.push('Secure');
  res.append('Set-Cookie', parts.join('; '));
}

export function clearSessionCookie(res: Response) {
  res.append('Set-Cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
}

export async function createSession(
  em: EntityManager,
  user: User,
  meta: { ipAddress?: string; userAgent?: string },
): Promise<{ token: string; session: Session }> {
  const token = randomToken('', 24);
  const session = em.create(Session, {
    user,
    tokenHash: sha256Hex(token),
    expiresAt: new Date(Date.now() + SESSION_TTL_SECONDS * 1000),
    ipAddress: meta.ipAddress ?? null,
    userAgent: meta.userAgent ?? null,
    activeOrganizationId: null,
  });
  await em.flush();
  return { token, session };
}

export async function findSession(em: EntityManager, token: string): Promise<Session | null> {
  const session = await em.findOne(Session, { tokenHash: sha256Hex(token) }, { populate: ['user'] });
  if (!session) return null;
  if (session.expiresAt.getTime() <= Date.now()) {
    await em.remove(session).flush();
    return null;
  }
  return session;
}

export async function resolveSessionPrincipal(em: EntityManager, token: string): Promise<UserPrincipal | null> {
  const session = await findSession(em, token);
  return session ? { kind: 'user', userId: session.user.id, sessionId: session.id, scopes: USER_SCOPES } : null;
}
