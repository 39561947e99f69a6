/** Rules shared by several auth routes: password and username checks, the verification mail. */
import type { EntityManager } from '../../kit/db.ts';
import { User } from '../entities.ts';
import { AUTH_ERRORS } from '../errors.ts';
import { authUrl, deliver, type AuthContext } from '../http.ts';
import { verificationMail } from '../mail-templates.ts';
import { createVerification } from '../verification.ts';

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 128;
export const USERNAME_MIN = 3;
export const USERNAME_MAX = 30;

export function checkPasswordLength(password: string) {
  if (password.length < PASSWORD_MIN) throw AUTH_ERRORS.PASSWORD_TOO_SHORT();
  if (password.length > PASSWORD_MAX) throw AUTH_ERRORS.PASSWORD_TOO_LONG();
}

/** Length 3 to 30, letters, digits, underscore and dot, unique case-insensitively (422 otherwise). */
export async function checkUsername(em: EntityManager, username: string, selfId?: string) {
  if (username.length < USERNAME_MIN) throw AUTH_ERRORS.USERNAME_TOO_SHORT();
  if (username.length > USERNAME_MAX) throw AUTH_ERRORS.USERNAME_TOO_LONG();
  if (!/^[a-zA-Z0-9_.]+$/.test(username)) throw AUTH_ERRORS.USERNAME_INVALID();
  const taken = await em.findOne(User, { username: username.toLowerCase() }, { fields: ['id'] });
  if (taken && taken.id !== selfId) throw AUTH_ERRORS.USERNAME_TAKEN();
}

export interface EmailVerificationValue {
  userId: string;
  email: string;
}

/** Creates a verification token for the user's current email and mails the link. */
export async function sendVerificationEmail(
  ctx: AuthContext,
  em: EntityManager,
  user: User,
  callbackURL: string | undefined,
): Promise<void> {
  const token = await createVerification(em, 'verify-email', { userId: user.id, email: user.email } satisfies EmailVerificationValue);
  const url = authUrl(ctx, `/verify-email?token=${token}&callbackURL=${encodeURIComponent(callbackURL || '/')}`);
  deliver(ctx, verificationMail({ to: user.email, name: user.name, url }));
}

/** Runs work after the answer on its own EntityManager, so its cost and outcome never show in it. */
export function inBackground(ctx: AuthContext, what: string, work: (em: EntityManager) => Promise<void>) {
  const em = ctx.deps.orm.em.fork() as EntityManager;
  setImmediate(() => {
    work(em).catch((err: unknown) => ctx.deps.log.error({ err, requestId: ctx.req.id }, `auth background ${what} failed`));
  });
}
