/**
 * The OAuth 2.0 authorization-code side of the local GitHub and Discord servers: one registered OAuth
 * app (client id + secret), an authorize page where a user signs in by name and approves (a form
 * posting back to the same URL, then a redirect to `redirect_uri?code&state`), single-use codes bound
 * to the client and redirect URI (10 minutes), and access tokens that identify the user.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';

export interface OAuthApp {
  clientId: string;
  clientSecret: string;
  /** Access tokens issued, by token: the user's key (login or id). */
  tokens: Map<string, string>;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function createOAuthApp(prefix: string): OAuthApp & {
  codes: Map<string, { user: string; clientId: string; redirectUri: string; expires: number }>;
} {
  return {
    clientId: `${prefix}-client-${randomBytes(4).toString('hex')}`,
    clientSecret: randomBytes(20).toString('hex'),
    tokens: new Map(),
    codes: new Map(),
  };
}

/** Parses a form or JSON request body. */
export function parseBody(raw: string, contentType: string | undefined): Record<string, string> {
  if (!raw) return {};
  if (contentType?.includes('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(raw));
  try {
    return JSON.parse(raw) as Record<string, string>;
  } catch {
    return {};
  }
}

/**
 * GET: the sign-in-and-authorize page. POST (the form): `user` must be known (`findUser` answers its
 * key), then a code for it is issued and the browser redirected to the client's redirect URI.
 */
export function authorizePage(
  app: ReturnType<typeof createOAuthApp>,
  opts: { service: string; userLabel: string; findUser: (name: string) => string | null },
  req: http.IncomingMessage,
  params: Record<string, string>,
  res: http.ServerResponse,
) {
  const html = (status: number, error?: string) => {
    res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Authorize application — ${opts.service}</title></head>
<body><main><h1>Authorize application</h1>
<p>Sign in to ${opts.service} to connect your account.</p>
${error ? `<p role="alert">${escape(error)}</p>` : ''}
<form method="post">
<input type="hidden" name="client_id" value="${escape(params.client_id ?? '')}">
<input type="hidden" name="redirect_uri" value="${escape(params.redirect_uri ?? '')}">
<input type="hidden" name="state" value="${escape(params.state ?? '')}">
<label>${opts.userLabel} <input name="user" autocomplete="username"></label>
<button type="submit">Authorize</button>
</form></main></body></html>`);
  };
  if (params.client_id !== app.clientId) return html(400, 'Unknown application.');
  if (!params.redirect_uri) return html(400, 'Missing redirect_uri.');
  if (req.method === 'GET') return html(200);
  const user = opts.findUser(params.user ?? '');
  if (!user) return html(200, `Incorrect ${opts.userLabel.toLowerCase()}.`);
  const code = randomBytes(10).toString('hex');
  app.codes.set(code, { user, clientId: app.clientId, redirectUri: params.redirect_uri, expires: Date.now() + 600_000 });
  const to = new URL(params.redirect_uri);
  to.searchParams.set('code', code);
  if (params.state) to.searchParams.set('state', params.state);
  res.writeHead(302, { location: to.toString() });
  res.end();
}

/** Token exchange: client credentials, then a live single-use code for the same client and redirect URI. */
export function exchangeCode(
  app: ReturnType<typeof createOAuthApp>,
  body: Record<string, string>,
  tokenPrefix: string,
): { ok: true; token: string } | { ok: false; error: 'invalid_client' | 'invalid_grant' } {
  if (body.client_id !== app.clientId || body.client_secret !== app.clientSecret) return { ok: false, error: 'invalid_client' };
  const c = body.code ? app.codes.get(body.code) : undefined;
  if (body.code) app.codes.delete(body.code);
  if (!c || c.expires < Date.now() || c.redirectUri !== body.redirect_uri) return { ok: false, error: 'invalid_grant' };
  const token = `${tokenPrefix}${randomBytes(16).toString('hex')}`;
  app.tokens.set(token, c.user);
  return { ok: true, token };
}
