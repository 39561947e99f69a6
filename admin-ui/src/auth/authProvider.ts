/**
 * Cookie-session auth against the Better-Auth-compatible endpoints of the API (same origin):
 * the session cookie is HttpOnly, so the browser carries it and we only ever ask the server.
 * `login` signs in with an email or a username, or signs up (`{ signUp: … }`), so react-admin's
 * own login flow (redirect, cache reset) follows both.
 */
import type { AuthProvider, UserIdentity } from 'react-admin';
import { authApi } from '../common/api.ts';
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

export type LoginParams =
  | { email?: string; username?: string; password: string }
  | { signUp: SignUpParams };

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

export const authProvider: AuthProvider = {
  async login(params: LoginParams) {
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
    if (identifier.includes('@')) {
      await authApi('/sign-in/email', { email: identifier, password: params.password, callbackURL: VERIFY_CALLBACK });
    } else {
      await authApi('/sign-in/username', { username: identifier, password: params.password });
    }
  },

  async logout() {
    setCurrentOrganizationId(null);
    await authApi('/sign-out', {}).catch(() => undefined);
  },

  async checkAuth() {
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
