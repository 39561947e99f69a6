/**
 * Cookie-session auth against the Better-Auth-compatible endpoints of the API (same origin):
 * the session cookie is HttpOnly, so the browser carries it and we only ever ask the server.
 * `login` signs in with an email or a username, or signs up (`{ signUp: … }`), so react-admin's
 * own login flow (redirect, cache reset) follows both.
 */
import type { AuthProvider, UserIdentity } from 'react-admin';
import { authApi } from '../common/api.ts';
import { TwoFactorRequired } from '../account/TwoFactorStep.tsx';

export const signOut = () => authApi('/sign-out', {}).catch(() => undefined);
import { setCurrentOrganizationId } from '../common/organization.ts';

export interface SessionUser {
  id: string;
  email: string;
  emailVerified?: boolean;
  name?: string | null;
  username?: string | null;
  image?: string | null;
}

interface Session {
  session: unknown;
  user: SessionUser;
}

export interface SignUpParams {
  email: string;
  password: string;
  name: string;
  username?: string;
}

export type LoginParams = ({ email?: string; username?: string; password: string } | { signUp: SignUpParams }) & {
  /** Where to go once signed in, if the visitor is still on the page that started the sign-in. */
  redirectTo?: string;
};

/** The sign-in in flight: checkAuth waits for it, so a page opened meanwhile sees the new session. */
let pendingLogin: Promise<unknown> | null = null;

/** Where verification links land: the console, which then shows the user as verified. */
export const VERIFY_CALLBACK = '/dashboard/?verified=1';

/** Thrown when sign-up succeeded but the address must be verified before a session starts. */
export class VerificationPending extends Error {
  constructor(readonly email: string) {
    super(`We sent a verification link to ${email}. Open it, then sign in.`);
  }
}

export async function getSession(): Promise<Session | null> {
  const res = await fetch('/api/auth/get-session', { credentials: 'include', headers: { Accept: 'application/json' } });
  if (!res.ok) return null;
  const body = (await res.json().catch(() => null)) as Session | null;
  return body && body.user ? body : null;
}

/** Signs in with an email or a username, or signs up. */
async function signIn(params: LoginParams): Promise<void> {
  if ('signUp' in params) {
    const { email, password, name, username } = params.signUp;
    const res = await authApi<{ token: string | null }>('/sign-up/email', {
      email: email.trim(),
      password,
      name: name.trim(),
      ...(username?.trim() ? { username: username.trim() } : {}),
      callbackURL: VERIFY_CALLBACK,
    });
    if (!res.token) throw new VerificationPending(email.trim());
    return;
  }
  const identifier = (params.email ?? params.username ?? '').trim();
  const res = identifier.includes('@')
    ? await authApi<{ twoFactorRedirect?: boolean }>('/sign-in/email', { email: identifier, password: params.password, callbackURL: VERIFY_CALLBACK })
    : await authApi<{ twoFactorRedirect?: boolean }>('/sign-in/username', { username: identifier, password: params.password });
  // No session yet: the sign-in page asks for the second factor (account/TwoFactorStep.tsx).
  if (res?.twoFactorRedirect) throw new TwoFactorRequired();
}

export const authProvider: AuthProvider = {
  async login(params: LoginParams) {
    const startedOn = window.location.hash;
    const attempt = signIn(params);
    pendingLogin = attempt.catch(() => undefined);
    try {
      await attempt;
    } finally {
      pendingLogin = null;
    }
    // Go on only if the visitor is still where they signed in; if they opened another page meanwhile,
    // stay there (react-admin navigates to `redirectTo` whatever it is, so name the current page).
    const here = window.location.hash.replace(/^#/, '') || '/';
    return { redirectTo: window.location.hash === startedOn ? (params.redirectTo ?? '/') : here };
  },

  // Local clean-up only. react-admin also calls this when checkAuth fails, which can race with a
  // sign-in still in flight; ending the server session here would end that new session. The user's
  // own "Sign out" (layout/Layout.tsx) calls the auth service first.
  async logout() {
    setCurrentOrganizationId(null);
  },

  async checkAuth() {
    if (pendingLogin) await pendingLogin;
    if (!(await getSession())) {
      // `message: false` sends the visitor to the login page without an error toast.
      throw { message: false };
    }
  },

  async checkError(error: { status?: number }) {
    if (error?.status === 401) throw new Error('Your session has expired, please sign in again.');
  },

  async getIdentity(): Promise<UserIdentity> {
    const current = await getSession();
    if (!current) throw new Error('Not signed in');
    const { user } = current;
    return {
      id: user.id,
      fullName: user.name || user.username || user.email,
      avatar: user.image ?? undefined,
      email: user.email,
      emailVerified: user.emailVerified ?? false,
    };
  },
};
