/**
 * One-time values sent by mail: random, stored only as `<purpose>:<sha256>`, expiring, and deleted on
 * use (the delete is the claim, so two concurrent uses cannot both succeed).
 */
import { randomInt } from 'node:crypto';
import type { EntityManager } from '../kit/db.ts';
import { sha256Hex } from '../kit/crypto.ts';
import { Verification } from './entities.ts';

export type Purpose = 'verify-email' | 'change-email' | 'reset-password' | 'delete-account';

/** Lifetimes in seconds (SPEC section 9). */
export const VERIFICATION_TTL: Record<Purpose, number> = {
  'verify-email': 3600,
  'change-email': 3600,
  'reset-password': 3600,
  'delete-account': 86400,
};

/** Token lengths: reset 24 characters, deletion 32, the others 32. */
const LENGTH: Record<Purpose, number> = {
  'verify-email': 32,
  'change-email': 32,
  'reset-password': 24,
  'delete-account': 32,
};

const ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

export function randomString(length: number, alphabet = ALPHABET): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

const identifierOf = (purpose: Purpose, token: string) => `${purpose}:${sha256Hex(token)}`;

export async function createVerification(em: EntityManager, purpose: Purpose, value: unknown): Promise<string> {
  const alphabet = purpose === 'delete-account' ? 'abcdefghijklmnopqrstuvwxyz0123456789' : ALPHABET;
  const token = randomString(LENGTH[purpose], alphabet);
  em.create(Verification, {
    identifier: identifierOf(purpose, token),
    value: JSON.stringify(value),
    expiresAt: new Date(Date.now() + VERIFICATION_TTL[purpose] * 1000),
  });
  await em.flush();
  // Now and then, drop values that expired unused.
  if (Math.random() < 0.01) await em.nativeDelete(Verification, { expiresAt: { $lt: new Date() } });
  return token;
}

export type Outcome<T> = { status: 'ok'; value: T } | { status: 'expired' } | { status: 'invalid' };

/** The value of a live token without using it up (the reset-password link check, ownership checks). */
export async function peekVerification<T>(em: EntityManager, purpose: Purpose, token: string): Promise<Outcome<T>> {
  if (!token) return { status: 'invalid' };
  const v = await em.findOne(Verification, { identifier: identifierOf(purpose, token) });
  if (!v) return { status: 'invalid' };
  if (v.expiresAt.getTime() <= Date.now()) {
    await em.nativeDelete(Verification, { id: v.id });
    return { status: 'expired' };
  }
  return { status: 'ok', value: JSON.parse(v.value) as T };
}

/** Uses a token up: its value if it was live. Expired tokens are deleted too. */
export async function consumeVerification<T>(em: EntityManager, purpose: Purpose, token: string): Promise<Outcome<T>> {
  if (!token) return { status: 'invalid' };
  const v = await em.findOne(Verification, { identifier: identifierOf(purpose, token) });
  if (!v) return { status: 'invalid' };
  const claimed = await em.nativeDelete(Verification, { id: v.id });
  if (claimed !== 1) return { status: 'invalid' };
  if (v.expiresAt.getTime() <= Date.now()) return { status: 'expired' };
  return { status: 'ok', value: JSON.parse(v.value) as T };
}
