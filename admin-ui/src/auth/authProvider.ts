/**
 * Cookie-session auth against the Better-Auth-compatible endpoints of the API (same origin):
 * the session cookie is HttpOnly, so the browser carries it and we only ever ask the server.
 */
import type { AuthProvider, UserIdentity } from 'react-admin';

interface SessionUser {
  id: string;
  email: string;
  name?: string | null;
  image?: string | null;
}

interface Session {
  session: unknown;
  user: SessionUser;
}

async function authFetch(path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(path, {
    ...init,
    credentials: 'include',
    headers: { Accept: 'application/json', ...(init.body ? { 'Content-Type': 'application/json' } : {}) },
  });
}

async function readJson(res: Response): Promise<unknown> {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

async function getSession(): Promise<Session | null> {
  const res = await authFetch('/api/auth/get-session');
  if (!res.ok) return null;
  const body = (await readJson(res)) as Session | null;
  return body && body.user ? body : null;
}

export const authProvider: AuthProvider = {
  async login(params: { email?: string; username?: string; password: string }) {
    const email = (params.email ?? params.username ?? '').trim();
    const res = await authFetch('/api/auth/sign-in/email', {
      method: 'POST',
      body: JSON.stringify({ email, password: params.password }),
    });
    if (!res.ok) {
      const body = (await readJson(res)) as { message?: string } | null;
      throw new Error(body?.message || (res.status === 401 ? 'Invalid email or password' : res.statusText));
    }
  },

  async logout() {
    await authFetch('/api/auth/sign-out', { method: 'POST', body: '{}' }).catch(() => undefined);
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
    return { id: user.id, fullName: user.name || user.email, avatar: user.image ?? undefined };
  },
};
