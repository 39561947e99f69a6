/**
 * Helpers for the auth tests: the official Better Auth 1.2 client in Node with a cookie jar, mail
 * lookups on the real mail catcher, and direct database access for time travel (expiry, freshness).
 */
import { createAuthClient } from 'better-auth/client';
import { organizationClient, usernameClient } from 'better-auth/client/plugins';
import { loadConfig } from '../../api/src/config.ts';
import { uniqueEmail } from '../harness.ts';

export const PASSWORD = 'correct horse battery';

/** Cookies as a browser keeps them: set, replaced, and removed by Max-Age=0. */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  header(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  store(res: Response) {
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';').map((s) => s.trim());
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      const maxAge = attrs.find((a) => /^max-age=/i.test(a));
      if (maxAge && Number(maxAge.split('=')[1]) <= 0) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  get(name: string): string | undefined {
    return this.cookies.get(name);
  }
}

export interface ClientOptions {
  /** Sent as the Origin header of every request (as a browser would). */
  origin?: string;
  /** Sent as X-Forwarded-For (the test server trusts loopback proxies), to pick a rate-limit bucket. */
  ip?: string;
  jar?: CookieJar;
}

export function authClient(url: string, opts: ClientOptions = {}) {
  const jar = opts.jar ?? new CookieJar();
  const customFetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
    const headers = new Headers(init?.headers);
    const cookie = jar.header();
    if (cookie) headers.set('cookie', cookie);
    if (opts.origin) headers.set('origin', opts.origin);
    if (opts.ip) headers.set('x-forwarded-for', opts.ip);
    const res = await fetch(input, { ...init, headers, redirect: 'manual' });
    jar.store(res);
    return res;
  };
  const client = createAuthClient({
    baseURL: `${url}/api/auth`,
    plugins: [organizationClient({ teams: { enabled: true } }), usernameClient()],
    fetchOptions: { customFetchImpl },
  });
  /** A raw request with this client's cookies (for links from mails and non-client routes). */
  const raw = (path: string, init: RequestInit = {}) => customFetchImpl(path.startsWith('http') ? path : `${url}${path}`, init);
  return { client, jar, raw };
}

export type AuthClient = ReturnType<typeof authClient>;

/** Signs a new user up through the client; returns the client (signed in) and the user. */
export async function signedUpUser(url: string, opts: ClientOptions & { email?: string; name?: string; username?: string } = {}) {
  const c = authClient(url, opts);
  const email = opts.email ?? uniqueEmail('auth');
  const res = await c.client.signUp.email({
    email,
    password: PASSWORD,
    name: opts.name ?? 'Test User',
    ...(opts.username ? { username: opts.username } : {}),
  });
  if (res.error) throw new Error(`sign-up failed: ${res.error.status} ${res.error.message}`);
  return { ...c, email, user: res.data!.user, token: res.data!.token as string };
}

interface Mail {
  subject: string;
  text: string;
  html?: string;
  to: { address: string }[];
  date?: string;
}

const mailUi = () => loadConfig().MAIL_UI_URL.replace('localhost', '127.0.0.1');

/** Mails to an address (oldest first), optionally only those whose subject matches. */
export async function mailsTo(to: string): Promise<Mail[]> {
  const res = await fetch(`${mailUi()}/email`);
  const all = (await res.json()) as Mail[];
  return all.filter((m) => m.to.some((t) => t.address.toLowerCase() === to.toLowerCase()));
}

/** Waits for the n-th mail (1-based) to an address whose subject matches. */
export async function waitForMailMatching(to: string, subject: RegExp, count = 1, timeoutMs = 20_000): Promise<Mail> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const mine = (await mailsTo(to)).filter((m) => subject.test(m.subject));
    if (mine.length >= count) return mine[count - 1]!;
    if (Date.now() > deadline) throw new Error(`no mail ${count} matching ${subject} to ${to} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The first link in a mail's text that goes to the auth service (or any link containing `contains`). */
export function linkIn(mail: Mail, contains = '/api/auth/'): string {
  const links = mail.text.match(/https?:\/\/\S+/g) ?? [];
  const link = links.find((l) => l.includes(contains));
  if (!link) throw new Error(`no link with ${contains} in mail "${mail.subject}": ${mail.text}`);
  return link;
}

/** The same path and query on the test server (mails link to PUBLIC_URL). */
export function onServer(url: string, link: string): string {
  const u = new URL(link);
  return `${url}${u.pathname}${u.search}`;
}

type Result<T> = { data: T | null; error: { status: number; message?: string; code?: string } | null };
export interface MemberView {
  id: string;
  userId: string;
  organizationId: string;
  role: string;
  teamId: string | null;
  user: { id: string; email: string; name: string; image: string | null };
}
export interface TeamView {
  id: string;
  name: string;
  organizationId: string;
}

/**
 * GET /organization/list-members through the client. The route is newer than the 1.2 client's types,
 * but its path proxy calls it all the same (organization.listMembers → GET /organization/list-members).
 */
export function listMembers(
  c: AuthClient,
  query: { organizationId?: string; limit?: number; offset?: number },
): Promise<Result<{ members: MemberView[]; total: number }>> {
  const org = c.client.organization as unknown as {
    listMembers(arg: { query: typeof query }): Promise<Result<{ members: MemberView[]; total: number }>>;
  };
  return org.listMembers({ query });
}

/** GET /organization/list-teams through the client (typed: the 1.2 client leaves the answer unknown). */
export function listTeams(c: AuthClient, query: { organizationId?: string }): Promise<Result<TeamView[]>> {
  return c.client.organization.listTeams({ query }) as Promise<Result<TeamView[]>>;
}
