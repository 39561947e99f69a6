/**
 * The Better Auth two-factor plugin under /api/auth/two-factor/*: enable, disable, get-totp-uri,
 * verify-totp, send-otp, verify-otp, generate-backup-codes, verify-backup-code. The verify routes work
 * for a signed-in user (the first verify-totp after enable turns two-factor on) and for a pending
 * sign-in (the `two_factor` cookie set when sign-in answered `twoFactorRedirect: true`), which they
 * complete with a new session. view-backup-codes is server-only in Better Auth and not routed here
 * (backup codes are stored hashed: they are shown once, when generated).
 */
import { serializeUserCore } from '../serialize.ts';
import { z } from 'zod/v4';
import { User } from '../entities.ts';
import { TWO_FACTOR_ERRORS } from '../errors.ts';
import { authEndpoint, currentSession, deliver, requestMeta, resetCookies, type AuthContext, type AuthEndpoint } from '../http.ts';
import { twoFactorOtpMail } from '../mail-templates.ts';
import { createSession, setSessionCookies, type LoadedSession } from '../sessions.ts';
import {
  OTP_TTL_SECONDS,
  checkOtp,
  checkUserPassword,
  countAttempt,
  disable,
  endChallenge,
  enrol,
  hasTwoFactor,
  issueOtp,
  readChallenge,
  replaceBackupCodes,
  totpUri,
  trustDevice,
  useBackupCode,
  verifyTotp,
  type Challenge,
} from './service.ts';

/** Who is proving a second factor: the signed-in user, or the user of a pending sign-in. */
interface Prover {
  user: User;
  me: LoadedSession | null;
  challenge: Challenge | null;
  /** Keys the mailed code: the pending sign-in, or the user's session. */
  key: string;
}

async function prover(ctx: AuthContext): Promise<Prover> {
  const me = await currentSession(ctx);
  if (me) return { user: me.user, me, challenge: null, key: `${me.user.id}!${me.session.id}` };
  const challenge = await readChallenge(ctx.em, ctx.deps.cfg, ctx.req);
  const user = challenge ? await ctx.em.findOne(User, { id: challenge.userId }) : null;
  if (!challenge || !user) throw TWO_FACTOR_ERRORS.INVALID_TWO_FACTOR_COOKIE();
  return { user, me: null, challenge, key: challenge.key };
}

const shortUser = serializeUserCore;

/** The second factor passed: a pending sign-in becomes a session; a signed-in user turns two-factor on. */
async function passed(ctx: AuthContext, p: Prover, opts: { trustDevice?: boolean; disableSession?: boolean } = {}) {
  const { cfg } = ctx.deps;
  if (p.challenge) {
    if (!(await endChallenge(ctx.em, cfg, ctx.res, p.challenge))) throw TWO_FACTOR_ERRORS.INVALID_TWO_FACTOR_COOKIE();
    if (opts.disableSession) return { token: null, user: shortUser(p.user) };
    const s = await createSession(ctx.em, p.user, { ...requestMeta(ctx.req), rememberMe: p.challenge.rememberMe });
    setSessionCookies(ctx.res, cfg, s);
    if (opts.trustDevice) trustDevice(cfg, ctx.res, p.user.id);
    return { token: s.token, user: shortUser(p.user) };
  }
  const me = p.me!;
  if (!me.user.twoFactorEnabled) {
    me.user.twoFactorEnabled = true;
    await ctx.em.flush();
    resetCookies(ctx, me);
  }
  return { token: me.token, user: shortUser(me.user) };
}

/** A wrong code: the pending sign-in's own message, or (signed in) the plugin's cookie message. */
function failed(p: Prover, error: keyof typeof TWO_FACTOR_ERRORS): never {
  throw p.challenge ? TWO_FACTOR_ERRORS[error]() : TWO_FACTOR_ERRORS.INVALID_TWO_FACTOR_COOKIE();
}

const codeBody = z.object({ code: z.string(), trustDevice: z.boolean().optional() });
const passwordBody = z.object({ password: z.string() });

export const twoFactorEndpoints: AuthEndpoint[] = [
  authEndpoint({
    method: 'post',
    path: '/two-factor/enable',
    session: 'session',
    body: z.object({ password: z.string(), issuer: z.string().max(100).optional() }),
    handler: async ({ em, deps, me, body }) => {
      await checkUserPassword(em, me.user.id, body.password);
      return enrol(em, deps.cfg, me.user, body.issuer);
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/disable',
    session: 'session',
    body: passwordBody,
    handler: async (ctx) => {
      await checkUserPassword(ctx.em, ctx.me.user.id, ctx.body.password);
      await disable(ctx.em, ctx.me.user);
      resetCookies(ctx, ctx.me);
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/get-totp-uri',
    session: 'session',
    body: passwordBody,
    handler: async ({ em, deps, me, body }) => {
      const uri = me.user.twoFactorEnabled ? await totpUri(em, deps.cfg, me.user) : null;
      if (!uri) throw TWO_FACTOR_ERRORS.TOTP_NOT_ENABLED();
      await checkUserPassword(em, me.user.id, body.password);
      return { totpURI: uri };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/verify-totp',
    body: codeBody,
    handler: async (ctx) => {
      const p = await prover(ctx);
      await countAttempt(ctx.em, p.user.id);
      const outcome = await verifyTotp(ctx.em, ctx.deps.cfg, p.user.id, ctx.body.code);
      if (outcome === 'none') throw TWO_FACTOR_ERRORS.TOTP_NOT_ENABLED();
      if (outcome === 'invalid') failed(p, 'INVALID_CODE');
      return passed(ctx, p, { trustDevice: ctx.body.trustDevice });
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/send-otp',
    body: z.object({ trustDevice: z.boolean().optional() }).optional(),
    handler: async (ctx) => {
      const p = await prover(ctx);
      if (!(await hasTwoFactor(ctx.em, p.user.id))) throw TWO_FACTOR_ERRORS.OTP_NOT_ENABLED();
      const code = await issueOtp(ctx.em, p.key);
      deliver(ctx, twoFactorOtpMail({ to: p.user.email, name: p.user.name, code, minutes: OTP_TTL_SECONDS / 60 }));
      return { status: true };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/verify-otp',
    body: codeBody,
    handler: async (ctx) => {
      const p = await prover(ctx);
      if (!(await hasTwoFactor(ctx.em, p.user.id))) throw TWO_FACTOR_ERRORS.OTP_NOT_ENABLED();
      await countAttempt(ctx.em, p.user.id);
      const outcome = await checkOtp(ctx.em, p.key, ctx.body.code);
      if (outcome === 'expired') throw TWO_FACTOR_ERRORS.OTP_HAS_EXPIRED();
      if (outcome === 'exhausted') throw TWO_FACTOR_ERRORS.TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE();
      if (outcome === 'invalid') failed(p, 'INVALID_CODE');
      return passed(ctx, p, { trustDevice: ctx.body.trustDevice });
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/generate-backup-codes',
    session: 'session',
    body: passwordBody,
    handler: async ({ em, me, body }) => {
      if (!me.user.twoFactorEnabled) throw TWO_FACTOR_ERRORS.TWO_FACTOR_NOT_ENABLED();
      await checkUserPassword(em, me.user.id, body.password);
      return { status: true, backupCodes: await replaceBackupCodes(em, me.user) };
    },
  }),

  authEndpoint({
    method: 'post',
    path: '/two-factor/verify-backup-code',
    body: z.object({ code: z.string(), disableSession: z.boolean().optional(), trustDevice: z.boolean().optional() }),
    handler: async (ctx) => {
      const p = await prover(ctx);
      if (!(await hasTwoFactor(ctx.em, p.user.id))) throw TWO_FACTOR_ERRORS.BACKUP_CODES_NOT_ENABLED();
      await countAttempt(ctx.em, p.user.id);
      if (!(await useBackupCode(ctx.em, p.user.id, ctx.body.code))) throw TWO_FACTOR_ERRORS.INVALID_BACKUP_CODE();
      return passed(ctx, p, { trustDevice: ctx.body.trustDevice, disableSession: ctx.body.disableSession });
    },
  }),
];
