/**
 * Customer session tokens kept in the browser: per organization for the portal (`full` from a sign-in
 * code or a seller's link, `checkout` from a checkout just paid, which only reads that purchase), and
 * per checkout for its confirmation page.
 */

export type TokenScope = 'full' | 'checkout';
export interface StoredSession {
  token: string;
  scope: TokenScope;
  email?: string | undefined;
}

const memory = new Map<string, string>();

function store(kind: 'local' | 'session'): Storage | null {
  try {
    return kind === 'local' ? window.localStorage : window.sessionStorage;
  } catch {
    return null;
  }
}

function read(kind: 'local' | 'session', key: string): string | null {
  try {
    return store(kind)?.getItem(key) ?? memory.get(key) ?? null;
  } catch {
    return memory.get(key) ?? null;
  }
}

function write(kind: 'local' | 'session', key: string, value: string | null) {
  if (value === null) memory.delete(key);
  else memory.set(key, value);
  try {
    if (value === null) store(kind)?.removeItem(key);
    else store(kind)?.setItem(key, value);
  } catch {
    // privacy mode or quota: the in-memory copy serves this page
  }
}

const portalKey = (slug: string) => `emporia.portal.${slug}`;
const checkoutKey = (clientSecret: string) => `emporia.checkout.${clientSecret}`;

export function getPortalSession(slug: string): StoredSession | null {
  const raw = read('local', portalKey(slug));
  if (!raw) return null;
  try {
    const s = JSON.parse(raw) as StoredSession;
    return s && typeof s.token === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function setPortalSession(slug: string, session: StoredSession | null) {
  write('local', portalKey(slug), session ? JSON.stringify(session) : null);
}

export function getCheckoutToken(clientSecret: string): string | null {
  return read('session', checkoutKey(clientSecret));
}

export function setCheckoutToken(clientSecret: string, token: string) {
  write('session', checkoutKey(clientSecret), token);
}

/**
 * A seller's link lands with `?customer_session_token=…`: keep it and drop it from the address bar
 * (and so from history, bookmarks and referrers).
 */
export function takeTokenFromUrl(): string | null {
  const url = new URL(window.location.href);
  const token = url.searchParams.get('customer_session_token');
  if (!token) return null;
  url.searchParams.delete('customer_session_token');
  window.history.replaceState(window.history.state, '', `${url.pathname}${url.search}${url.hash}`);
  return token;
}
