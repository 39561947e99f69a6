/** Identity tables of the auth service: users, their credential accounts and sessions. */
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

/** A signed-in session. Only the SHA-256 of the token is stored. */
export const Session = defineEntity({
  name: 'Session',
  tableName: 'sessions',
  properties: {
    ...baseProperties,
    user: () => p.manyToOne(User).deleteRule('cascade').index(),
    tokenHash: p.string().unique().hidden(),
    expiresAt: p.datetime(),
    ipAddress: p.string().nullable(),
    userAgent: p.text().nullable(),
    activeOrganizationId: p.uuid().nullable(),
  },
});
export type Session = InferEntity<typeof Session>;
