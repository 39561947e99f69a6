/** Better Auth's camelCase read models of users and sessions. */
import type { Session, User } from './entities.ts';

export interface SerializedUser {
  id: string;
  email: string;
  emailVerified: boolean;
  name: string;
  image: string | null;
  createdAt: string;
  updatedAt: string;
  username: string | null;
  displayUsername: string | null;
  twoFactorEnabled: boolean;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: string | null;
}

export interface SerializedSession {
  id: string;
  userId: string;
  token: string;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  ipAddress: string | null;
  userAgent: string | null;
  activeOrganizationId: string | null;
  impersonatedBy: string | null;
}

export interface SessionPayload {
  session: SerializedSession;
  user: SerializedUser;
}

/** The user as the two-factor answers show it: the core fields only. */
export function serializeUserCore(u: User) {
  return {
    id: u.id,
    email: u.email,
    emailVerified: u.emailVerified,
    name: u.name,
    image: u.image ?? null,
    createdAt: u.createdAt.toISOString(),
    updatedAt: (u.modifiedAt ?? u.createdAt).toISOString(),
  };
}

export function serializeUser(u: User): SerializedUser {
  return {
    ...serializeUserCore(u),
    username: u.username ?? null,
    displayUsername: u.username ? (u.displayUsername ?? u.username) : (u.displayUsername ?? null),
    twoFactorEnabled: u.twoFactorEnabled ?? false,
    role: u.role ?? 'user',
    banned: u.banned ?? false,
    banReason: u.banReason ?? null,
    banExpires: u.banExpires ? u.banExpires.toISOString() : null,
  };
}

/** `token` is the raw session token; only the caller's own session can be shown with it. */
export function serializeSession(s: Session, token: string): SerializedSession {
  return {
    id: s.id,
    userId: s.user.id,
    token,
    expiresAt: s.expiresAt.toISOString(),
    createdAt: s.createdAt.toISOString(),
    updatedAt: (s.updatedAt ?? s.createdAt).toISOString(),
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    activeOrganizationId: s.activeOrganizationId ?? null,
    impersonatedBy: s.impersonatedBy ?? null,
  };
}
