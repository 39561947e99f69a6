/**
 * Browser-facing hardening of the HTML pages (the console at /dashboard, the portal at /portal, the
 * hosted checkout at /checkout, the API reference at /docs): a strict Content-Security-Policy,
 * frame-ancestors, Referrer-Policy, X-Content-Type-Options and the rest of helmet's headers.
 *
 * - Scripts, styles, fonts and frames come from our own origin; styles may be inline (the UI
 *   libraries inject <style> elements); images also from data:/blob: and the object store (product
 *   media, avatars), uploads go to the object store (presigned URLs).
 * - With the Stripe processor, Stripe.js: scripts and frames from js.stripe.com, frames from
 *   hooks.stripe.com (3-D Secure), calls to api.stripe.com.
 * - Framing: nobody may frame the console, the portal or the docs; a checkout may be framed by its
 *   `embed_origin` (the embedded checkout), as `frameAncestorsFor` says.
 * - Referrer-Policy strict-origin-when-cross-origin: checkout secrets and portal tokens in URLs never
 *   leave in a Referer.
 */
import type { Request, RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { Config } from '../config.ts';

const STRIPE = {
  script: ['https://js.stripe.com', 'https://*.js.stripe.com'],
  frame: ['https://js.stripe.com', 'https://*.js.stripe.com', 'https://hooks.stripe.com'],
  connect: ['https://api.stripe.com'],
  img: ['https://*.stripe.com'],
};

const FRAME_ANCESTORS = 'frameAncestors';

/** The origins that may frame this response, set by a route before the headers (none by default). */
export function allowFraming(res: Response, origins: string[]): void {
  res.locals[FRAME_ANCESTORS] = origins;
}

const ancestors = (res: Response): string[] => (res.locals[FRAME_ANCESTORS] as string[] | undefined) ?? [];

export function htmlSecurityHeaders(cfg: Pick<Config, 'PAYMENT_PROCESSOR' | 'S3_ENDPOINT' | 'PUBLIC_URL'>): RequestHandler {
  const storage = new URL(cfg.S3_ENDPOINT).origin;
  const stripe = cfg.PAYMENT_PROCESSOR === 'stripe';
  const headers = helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        baseUri: ["'self'"],
        objectSrc: ["'none'"],
        scriptSrc: ["'self'", ...(stripe ? STRIPE.script : [])],
        scriptSrcAttr: ["'none'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:', 'blob:', storage, ...(stripe ? STRIPE.img : [])],
        fontSrc: ["'self'", 'data:'],
        connectSrc: ["'self'", storage, ...(stripe ? STRIPE.connect : [])],
        frameSrc: stripe ? STRIPE.frame : ["'none'"],
        formAction: ["'self'"],
        frameAncestors: [(_req, res) => {
          const list = ancestors(res as Response);
          return list.length ? list.join(' ') : "'none'";
        }],
      },
    },
    // frame-ancestors decides; X-Frame-Options (below) only for browsers that ignore it.
    xFrameOptions: false,
    referrerPolicy: { policy: 'strict-origin-when-cross-origin' },
    // 3-D Secure and wallet flows may open popups that talk back to the page.
    crossOriginOpenerPolicy: { policy: 'same-origin-allow-popups' },
    // The embedded checkout is loaded by another origin's page.
    crossOriginResourcePolicy: false,
    // HSTS only where the public URL is https (plain-HTTP development and test servers have none).
    strictTransportSecurity: new URL(cfg.PUBLIC_URL).protocol === 'https:' ? { maxAge: 15_552_000 } : false,
  });
  return (req: Request, res: Response, next) => {
    headers(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (!ancestors(res).length) res.setHeader('X-Frame-Options', 'DENY');
      next();
    });
  };
}
