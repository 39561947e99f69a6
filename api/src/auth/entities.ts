/**
 * Identity tables of the auth service: users, their credential accounts, sessions, one-time
 * verification values (email verification, password reset, email change, account deletion) and the
 * rate-limit counters shared by every API replica.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core';
import { baseProperties } from '../kit/entity.ts';

export const User = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    ...baseProperties,
    email: p.string().unique(),
    emailVerified: p.boolean().default(false),
    name: p.string().default(''),
    image: p.string().nullable(),
    username: p.string().nullable().unique(),
    displayUsername: p.string().nullable(),
    /** Sign-in asks for a second factor (two-factor plugin). */
    twoFactorEnabled: p.boolean().default(false),
    /** The admin plugin's role (`user` or `admin`, comma-separated when several) and ban. */
    role: p.string().default('user'),
    banned: p.boolean().default(false),
    banReason: p.text().nullable(),
    banExpires: p.datetime().nullable(),
  },
});
export type User = InferEntity<typeof User>;

/** A way to sign in: `credential` holds the password hash; social providers come later. */
export const Account = defineEntity({
  name: 'Account',
  tableName: 'accounts',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    providerId: p.string(),
    accountId: p.string(),
    password: p.string().nullable().hidden(),
    accessToken: p.text().nullable().hidden(),
    refreshToken: p.text().nullable().hidden(),
    idToken: p.text().nullable().hidden(),
    accessTokenExpiresAt: p.datetime().nullable(),
    refreshTokenExpiresAt: p.datetime().nullable(),
    scope: p.string().nullable(),
  },
  uniques: [{ properties: ['providerId', 'accountId'] }],
});
export type Account = InferEntity<typeof Account>;

/**
 * A signed-in session. Only the SHA-256 of the token is stored. `updatedAt` is when the session was
 * created or last refreshed (freshness and the refresh schedule read it); `modifiedAt` is any change.
 */
export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    tokenHash: p.string().unique().hidden(),
    expiresAt: p.datetime(),
    updatedAt: p.datetime().nullable(),
    /** false when signed in with rememberMe: false (browser-session cookie, never refreshed). */
    rememberMe: p.boolean().default(true),
    ipAddress: p.string().nullable(),
    userAgent: p.text().nullable(),
    activeOrganizationId: p.uuid().nullable(),
    /** The admin who started this session by impersonating the user. */
    impersonatedBy: p.uuid().nullable(),
  },
});
export type Session = InferEntity<typeof Session>;

/**
 * A one-time value sent by mail. `identifier` is `<purpose>:<sha256 of the token>` (the token itself is
 * never stored); `value` is what the token stands for (JSON). Deleted on use.
 */
export const Verification = defineEntity({
  name: 'Verification',
  tableName: 'verifications',
  properties: {
    ...baseProperties,
    identifier: p.string().unique(),
    value: p.text(),
    expiresAt: p.datetime().index(),
  },
});
export type Verification = InferEntity<typeof Verification>;

/** Fixed-window request counters per `<ip>|<path>`, updated with one atomic upsert. */
export const RateLimit = defineEntity({
  name: 'RateLimit',
  tableName: 'rate_limits',
  properties: {
    key: p.string().primary(),
    count: p.integer(),
    windowStart: p.datetime(),
  },
});
export type RateLimit = InferEntity<typeof RateLimit>;
