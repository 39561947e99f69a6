/**
 * Passkeys (Better Auth 1.2 `passkeyClient` wire format) on @simplewebauthn/server: registration and
 * authentication options, their verification, and the user's list, rename and delete. The relying party
 * is PUBLIC_URL's host name; accepted origins are PUBLIC_URL's, the trusted origins, and the origin the
 * request itself came to when it is on the relying party's domain. The challenge of a ceremony is kept
 * server-side for 5 minutes, named by a signed cookie of the browser that asked for it, and used once.
 */
import { randomBytes } from 'node:crypto';
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransport,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { z } from 'zod/v4';
import type { Config } from '../../config.ts';
import type { EntityManager } from '../../kit/db.ts';
import { sha256Hex } from '../../kit/crypto.ts';
import { User, Verification } from '../entities.ts';
import { AuthError } from '../errors.ts';
import {
  authEndpoint,
  currentSession,
  requestMeta,
  requireFreshSession,
  requireSession,
  type AuthContext,
  type AuthEndpoint,
} from '../http.ts';
import { trustedOrigins } from '../origins.ts';
import { serializeSession } from '../serialize.ts';
import { createSession, isSecure, parseCookies, setSessionCookies, signCookieValue, verifySignedValue } from '../sessions.ts';
import { Passkey } from './entities.ts';

const CHALLENGE_TTL_SECONDS = 300;
const RP_NAME = 'Emporia';

const e = (status: number, message: string) => () => new AuthError(status, message);
export const PASSKEY_ERRORS = {
  CHALLENGE_NOT_FOUND: e(400, 'Challenge not found'),
  NOT_ALLOWED: e(401, 'You are not allowed to register this passkey'),
  FAILED_TO_VERIFY_REGISTRATION: e(500, 'Failed to verify registration'),
  PASSKEY_NOT_FOUND: e(401, 'Passkey not found'),
  PASSKEY_NOT_FOUND_404: e(404, 'Passkey not found'),
  AUTHENTICATION_FAILED: e(400, 'Authentication failed'),
  ORIGIN_MISSING: e(400, 'origin missing'),
};

export const rpId = (cfg: Pick<Config, 'PUBLIC_URL'>) => new URL(cfg.PUBLIC_URL).hostname;

function expectedOrigins(ctx: AuthContext): string[] {
  const { cfg } = ctx.deps;
  const rp = rpId(cfg);
  const origins = new Set(trustedOrigins(cfg).filter((o) => !o.includes('*')));
  const own = `${ctx.req.protocol}://${ctx.req.get('host')}`;
  if (URL.canParse(own)) {
    const host = new URL(own).hostname;
    if (host === rp || host.endsWith(`.${rp}`)) origins.add(new URL(own).origin);
  }
  return [...origins];
}

function cookieName(cfg: Pick<Config, 'PUBLIC_URL' | 'SECRET'>) {
  return `${isSecure(cfg) ? '__Secure-' : ''}better-auth.better-auth-passkey`;
}

const identifierOf = (id: string) => `passkey-challenge:${sha256Hex(id)}`;

interface ChallengeValue {
  expectedChallenge: string;
  userId: string;
}

async function saveChallenge(ctx: AuthContext, value: ChallengeValue) {
  const id = randomBytes(24).toString('base64url');
  ctx.em.create(Verification, {
    identifier: identifierOf(id),
    value: JSON.stringify(value),
    expiresAt: new Date(Date.now() + CHALLENGE_TTL_SECONDS * 1000),
  });
  await ctx.em.flush();
  const { cfg } = ctx.deps;
  const parts = [
    `${cookieName(cfg)}=${encodeURIComponent(signCookieValue(cfg.SECRET, id))}`,
    `Max-Age=${CHALLENGE_TTL_SECONDS}`,
    'Path=/',
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (isSecure(cfg)) parts.push('Secure');
  ctx.res.append('Set-Cookie', parts.join('; '));
}

/** The challenge this browser asked for, used up; null when there is none (or it expired). */
async function takeChallenge(ctx: AuthContext, em: EntityManager): Promise<ChallengeValue | null> {
  const { cfg } = ctx.deps;
  const signed = parseCookies(ctx.req.headers.cookie).get(cookieName(cfg));
  const id = signed ? verifySignedValue(cfg.SECRET, signed) : null;
  if (!id) return null;
  const v = await em.findOne(Verification, { identifier: identifierOf(id) });
  if (!v) return null;
  const claimed = await em.nativeDelete(Verification, { id: v.id });
  if (claimed !== 1 || v.expiresAt.getTime() <= Date.now()) return null;
  return JSON.parse(v.value) as ChallengeValue;
}

const transportsOf = (p: Passkey) => (p.transports ? (p.transports.split(',') as AuthenticatorTransport[]) : undefined);

export function serializePasskey(p: Passkey) {
  return {
    id: p.id,
    name: p.name ?? undefined,
    publicKey: p.publicKey,
    userId: p.user.id,
    credentialID: p.credentialId,
    counter: p.counter,
    deviceType: p.deviceType,
    backedUp: p.backedUp,
    transports: p.transports ?? undefined,
    createdAt: p.createdAt.toISOString(),
    aaguid: p.aaguid ?? undefined,
  };
}

function requireOrigin(ctx: AuthContext): string {
  const origin = ctx.req.get('origin');
  if (!origin) throw PASSKEY_ERRORS.ORIGIN_MISSING();
  return origin;
}

export const passkeyEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'get',
    path: '/passkey/generate-register-options',
    query: z.object({ authenticatorAttachment: z.enum(['platform', 'cross-platform']).optional() }),
    handler: async (ctx) => {
      const me = await requireSession(ctx);
      const mine = await ctx.em.find(Passkey, { user: me.user.id });
      const options = await generateRegistrationOptions({
        rpName: RP_NAME,
        rpID: rpId(ctx.deps.cfg),
        userID: new TextEncoder().encode(randomBytes(24).toString('base64url').slice(0, 32)),
        userName: me.user.email || me.user.id,
        userDisplayName: me.user.email || me.user.id,
        attestationType: 'none',
        excludeCredentials: mine.map((p) => ({ id: p.credentialId, transports: transportsOf(p) })),
        authenticatorSelection: {
          residentKey: 'preferred',
          userVerification: 'preferred',
          ...(ctx.query.authenticatorAttachment ? { authenticatorAttachment: ctx.query.authenticatorAttachment } : {}),
        },
      });
      await saveChallenge(ctx, { expectedChallenge: options.challenge, userId: me.user.id });
      return options;
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/passkey/verify-registration',
    body: z.object({ response: z.record(z.string(), z.unknown()), name: z.string().max(255).optional() }),
    handler: async (ctx) => {
      const me = await requireFreshSession(ctx);
      requireOrigin(ctx);
      const challenge = await takeChallenge(ctx, ctx.em);
      if (!challenge) throw PASSKEY_ERRORS.CHALLENGE_NOT_FOUND();
      if (challenge.userId !== me.user.id) throw PASSKEY_ERRORS.NOT_ALLOWED();
      const response = ctx.body.response as unknown as RegistrationResponseJSON;
      let info;
      try {
        const result = await verifyRegistrationResponse({
          response,
          expectedChallenge: challenge.expectedChallenge,
          expectedOrigin: expectedOrigins(ctx),
          expectedRPID: rpId(ctx.deps.cfg),
          requireUserVerification: false,
        });
        if (!result.verified || !result.registrationInfo) throw new Error('not verified');
        info = result.registrationInfo;
      } catch (err) {
        ctx.deps.log.warn({ err, requestId: ctx.req.id }, 'passkey registration refused');
        throw PASSKEY_ERRORS.FAILED_TO_VERIFY_REGISTRATION();
      }
      if (await ctx.em.count(Passkey, { credentialId: info.credential.id })) throw PASSKEY_ERRORS.FAILED_TO_VERIFY_REGISTRATION();
      const passkey = ctx.em.create(Passkey, {
        user: me.user,
        name: ctx.body.name ?? null,
        publicKey: Buffer.from(info.credential.publicKey).toString('base64'),
        credentialId: info.credential.id,
        counter: info.credential.counter,
        deviceType: info.credentialDeviceType,
        backedUp: info.credentialBackedUp,
        transports: response.response?.transports?.join(',') || null,
        aaguid: info.aaguid ?? null,
      });
      await ctx.em.flush();
      return serializePasskey(passkey);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/passkey/generate-authenticate-options',
    // `email` is accepted and not used: the options never reveal whether an address has passkeys.
    body: z.object({ email: z.string().optional() }).optional(),
    handler: async (ctx) => {
      const s = await currentSession(ctx);
      const mine = s ? await ctx.em.find(Passkey, { user: s.user.id }) : [];
      const options = await generateAuthenticationOptions({
        rpID: rpId(ctx.deps.cfg),
        userVerification: 'preferred',
        ...(mine.length ? { allowCredentials: mine.map((p) => ({ id: p.credentialId, transports: transportsOf(p) })) } : {}),
      });
      await saveChallenge(ctx, { expectedChallenge: options.challenge, userId: s?.user.id ?? '' });
      return options;
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/passkey/verify-authentication',
    body: z.object({ response: z.record(z.string(), z.unknown()) }),
    handler: async (ctx) => {
      requireOrigin(ctx);
      const response = ctx.body.response as unknown as AuthenticationResponseJSON;
      const challenge = await takeChallenge(ctx, ctx.em);
      if (!challenge) throw PASSKEY_ERRORS.CHALLENGE_NOT_FOUND();
      if (typeof response.id !== 'string') throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND();
      const passkey = await ctx.em.findOne(Passkey, { credentialId: response.id }, { populate: ['user'] });
      if (!passkey) throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND();
      let newCounter: number;
      try {
        const result = await verifyAuthenticationResponse({
          response,
          expectedChallenge: challenge.expectedChallenge,
          expectedOrigin: expectedOrigins(ctx),
          expectedRPID: rpId(ctx.deps.cfg),
          credential: {
            id: passkey.credentialId,
            publicKey: new Uint8Array(Buffer.from(passkey.publicKey, 'base64')),
            counter: passkey.counter,
            transports: transportsOf(passkey),
          },
          requireUserVerification: false,
        });
        if (!result.verified) throw new Error('not verified');
        newCounter = result.authenticationInfo.newCounter;
      } catch (err) {
        ctx.deps.log.warn({ err, requestId: ctx.req.id }, 'passkey authentication refused');
        throw PASSKEY_ERRORS.AUTHENTICATION_FAILED();
      }
      passkey.counter = newCounter;
      const user = passkey.user as User;
      const s = await createSession(ctx.em, user, requestMeta(ctx.req));
      setSessionCookies(ctx.res, ctx.deps.cfg, s);
      return { session: serializeSession(s.session, s.token) };
    },
  }),

  authEndpoint({
    method: 'get',
    path: '/passkey/list-user-passkeys',
    handler: async (ctx) => {
      const me = await requireSession(ctx);
      const mine = await ctx.em.find(Passkey, { user: me.user.id }, { orderBy: { createdAt: 'asc' } });
      return mine.map(serializePasskey);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/passkey/delete-passkey',
    body: z.object({ id: z.string() }),
    handler: async (ctx) => {
      const me = await requireSession(ctx);
      if (!z.uuid().safeParse(ctx.body.id).success) throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND_404();
      const deleted = await ctx.em.nativeDelete(Passkey, { id: ctx.body.id, user: me.user.id });
      if (!deleted) throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND_404();
      return null;
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/passkey/update-passkey',
    body: z.object({ id: z.string(), name: z.string().max(255) }),
    handler: async (ctx) => {
      const me = await requireSession(ctx);
      if (!z.uuid().safeParse(ctx.body.id).success) throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND_404();
      const passkey = await ctx.em.findOne(Passkey, { id: ctx.body.id, user: me.user.id }, { populate: ['user'] });
      if (!passkey) throw PASSKEY_ERRORS.PASSKEY_NOT_FOUND_404();
      passkey.name = ctx.body.name;
      await ctx.em.flush();
      return { passkey: serializePasskey(passkey) };
    },
  }),
];
