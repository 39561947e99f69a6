/**
 * Passport strategies of the auth service:
 * - `local` (email + password) and `local-username` (username + password): one scrypt verification
 *   whatever happens (unknown user, no password, wrong password), so neither the answer nor its timing
 *   tells whether an account exists;
 * - `session-bearer`: `Authorization: Bearer <session token>` (raw, or signed as in the cookie).
 */
import type { NextFunction, Request, Response } from 'express';
import passport from 'passport';
import { Strategy as BearerStrategy } from 'passport-http-bearer';
import { Strategy as LocalStrategy } from 'passport-local';
import type { EntityManager } from '../kit/db.ts';
import { Account, User } from './entities.ts';
import { dummyHash, verifyPassword } from './password.ts';
import { findSession, verifySignedValue, type LoadedSession } from './sessions.ts';

/** Verifies a password for a user found (or not) by `where`; false unless everything matches. */
export async function checkCredentials(
  em: EntityManager,
  where: { email: string } | { username: string },
  password: string,
): Promise<User | false> {
  const user = await em.findOne(User, where);
  const account = user ? await em.findOne(Account, { user, providerId: 'credential' }) : null;
  const hash = account?.password ?? (await dummyHash());
  const ok = await verifyPassword(password, hash);
  return ok && user && account?.password ? user : false;
}

passport.use(
  'local',
  new LocalStrategy(
    { usernameField: 'email', passwordField: 'password', session: false, passReqToCallback: true },
    (req: Request, email: string, password: string, done) => {
      checkCredentials(req.em, { email: email.trim().toLowerCase() }, password).then(
        (user) => done(null, user),
        (err: unknown) => done(err as Error),
      );
    },
  ),
);

passport.use(
  'local-username',
  new LocalStrategy(
    { usernameField: 'username', passwordField: 'password', session: false, passReqToCallback: true },
    (req: Request, username: string, password: string, done) => {
      checkCredentials(req.em, { username: username.trim().toLowerCase() }, password).then(
        (user) => done(null, user),
        (err: unknown) => done(err as Error),
      );
    },
  ),
);

let bearerSecret = '';
/** The secret that signs tokens sent as `<token>.<signature>` bearers. */
export function setBearerSecret(secret: string) {
  bearerSecret = secret;
}

passport.use(
  'session-bearer',
  new BearerStrategy(
    { passReqToCallback: true },
    (req: Request, raw: string, done: (err: Error | null, s?: LoadedSession | false) => void) => {
      let token = raw;
      try {
        token = decodeURIComponent(raw);
      } catch {
        // ignore: a malformed percent-encoding keeps the raw value
      }
      if (token.includes('.')) token = verifySignedValue(bearerSecret, token) ?? '';
      if (!token) return done(null, false);
      findSession(req.em, token).then(
        (session) => done(null, session ? { session, user: session.user, token } : false),
        (err: unknown) => done(err as Error),
      );
    },
  ),
);

/** Runs a passport strategy and resolves with what it authenticated (false when it did not). */
export function runStrategy<T>(name: string, req: Request, res: Response): Promise<T | false> {
  return new Promise((resolve, reject) => {
    const next: NextFunction = (err?: unknown) => (err ? reject(err) : resolve(false));
    passport.authenticate(name, { session: false }, (err: unknown, result: T | false) => {
      if (err) return reject(err);
      resolve(result ?? false);
    })(req, res, next);
  });
}
