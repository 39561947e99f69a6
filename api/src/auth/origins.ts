/**
 * Trusted origins. Redirect targets (callbackURL, redirectTo, errorCallbackURL, newUserCallbackURL) must
 * be on PUBLIC_URL's origin or one of TRUSTED_ORIGINS, or be a safe relative path; the Origin header of
 * a cookie-bearing POST must be trusted too (or be the request's own origin), which stops cross-site
 * form posts riding on the session cookie. Anything else is 403 `Invalid {field}`.
 */
import type { Request } from 'express';
import type { Config } from '../config.ts';
import { invalidField } from './errors.ts';

/** A relative path that cannot turn into another host (`//evil`, `/\evil`, encoded slashes). */
const SAFE_RELATIVE = /^\/(?!\/|\\|%2f|%5c)[\w\-.+/@]*(?:\?[\w\-.+/=&%@]*)?$/i;

export type OriginConfig = Pick<Config, 'PUBLIC_URL' | 'TRUSTED_ORIGINS'>;

export function trustedOrigins(cfg: OriginConfig): string[] {
  return [new URL(cfg.PUBLIC_URL).origin, ...cfg.TRUSTED_ORIGINS.map((o) => (o.includes('*') ? o : new URL(o).origin))];
}

function wildcardMatches(pattern: string, url: URL): boolean {
  // `https://*.example.com` or `*.example.com`: the scheme (when given) and the host pattern must match.
  const m = /^(?:(https?):\/\/)?(.+)$/.exec(pattern);
  if (!m) return false;
  if (m[1] && `${m[1]}:` !== url.protocol) return false;
  const re = new RegExp(
    '^' + m[2]!.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('[a-z0-9-]+(?:\\.[a-z0-9-]+)*') + '$',
    'i',
  );
  return re.test(url.host);
}

export function isTrustedUrl(cfg: OriginConfig, value: string, opts: { allowRelative: boolean }): boolean {
  if (value.startsWith('/')) return opts.allowRelative && SAFE_RELATIVE.test(value);
  if (!URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return trustedOrigins(cfg).some((o) => (o.includes('*') ? wildcardMatches(o, url) : o === url.origin));
}

/** Throws 403 `Invalid {field}` when `value` is given and not trusted. */
export function checkRedirect(cfg: OriginConfig, value: unknown, field: string): void {
  if (value === undefined || value === null || value === '') return;
  if (typeof value !== 'string' || !isTrustedUrl(cfg, value, { allowRelative: true })) throw invalidField(field);
}

/** The CSRF check on POSTs: the Origin (or Referer) of a request that carries cookies must be trusted. */
export function checkRequestOrigin(cfg: OriginConfig, req: Request): void {
  if (req.method !== 'POST' || !req.headers.cookie) return;
  const origin = req.get('origin') || req.get('referer') || '';
  if (!origin) return;
  const own = `${req.protocol}://${req.get('host')}`;
  if (URL.canParse(origin) && new URL(origin).origin === own) return;
  if (!isTrustedUrl(cfg, origin, { allowRelative: false })) throw invalidField('origin');
}

/** Checks every redirect target a request may carry (body and query), as Better Auth does on POSTs. */
export function checkRedirectTargets(cfg: OriginConfig, req: Request): void {
  const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
  const query = req.query as Record<string, unknown>;
  checkRedirect(cfg, body.callbackURL ?? query.callbackURL, 'callbackURL');
  checkRedirect(cfg, body.redirectTo, 'redirectURL');
  checkRedirect(cfg, body.errorCallbackURL, 'errorCallbackURL');
  checkRedirect(cfg, body.newUserCallbackURL, 'newUserCallbackURL');
}

/**
 * Whether an unsafe request's Origin (or Referer) names a site other than ours or a trusted origin.
 * No Origin and no Referer: a non-browser client, unless the browser says the request is cross-site
 * (`Sec-Fetch-Site`). An opaque `null` origin is foreign. Used to refuse cookie-authenticated /v1
 * writes from other sites (bearer-token requests carry no ambient credential and are not checked).
 */
export function isForeignOrigin(cfg: OriginConfig, req: Request): boolean {
  const origin = req.get('origin') || req.get('referer') || '';
  if (!origin) return req.get('sec-fetch-site') === 'cross-site';
  if (!URL.canParse(origin)) return true;
  if (new URL(origin).origin === `${req.protocol}://${req.get('host')}`) return false;
  return !isTrustedUrl(cfg, origin, { allowRelative: false });
}
