/**
 * The payments plugin's webhook receiver: `POST /polar/webhooks` verifies a Standard Webhooks signed
 * body (headers webhook-id, webhook-timestamp, webhook-signature with space-separated `v1,<base64>`
 * entries; HMAC-SHA256 keyed with the UTF-8 bytes of the whole secret, as `validateEvent` from
 * `@polar-sh/sdk/webhooks` does) and answers `{received: true}`. Errors are the plugin's:
 * 404 "Webhooks not enabled" without a configured secret, 400 "Webhook Error: <reason>" when
 * verification or parsing fails.
 */
import { timingSafeEqual } from 'node:crypto';
import express, { type Request, type Router } from 'express';
import type { Deps } from '../../deps.ts';
import { signWebhook } from '../../modules/webhooks/signing.ts';
import { AuthError } from '../errors.ts';
import { endpoint } from '../http.ts';

/** Seconds a delivery's timestamp may be away from now, either way. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export class WebhookVerificationError extends Error {}

/**
 * Standard Webhooks verification, message for message as the reference library: missing headers,
 * a non-numeric timestamp, a timestamp outside the tolerance, then no `v1` signature matching.
 */
export function verifyWebhook(
  secret: string,
  body: string,
  headers: Record<string, string | undefined>,
  now = new Date(),
): void {
  const id = headers['webhook-id'];
  const signature = headers['webhook-signature'];
  const timestampHeader = headers['webhook-timestamp'];
  if (!id || !signature || !timestampHeader) throw new WebhookVerificationError('Missing required headers');
  const timestamp = parseInt(timestampHeader, 10);
  if (Number.isNaN(timestamp)) throw new WebhookVerificationError('Invalid Signature Headers');
  const nowSeconds = Math.floor(now.getTime() / 1000);
  if (nowSeconds - timestamp > WEBHOOK_TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too old');
  if (timestamp > nowSeconds + WEBHOOK_TOLERANCE_SECONDS) throw new WebhookVerificationError('Message timestamp too new');
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).split(',')[1]!);
  for (const entry of signature.split(' ')) {
    const [version, value] = entry.split(',');
    if (version !== 'v1' || !value) continue;
    const given = Buffer.from(value);
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new WebhookVerificationError('No matching signature found');
}

/**
 * The body exactly as sent: the raw bytes when an earlier parser kept them (`rawBody`) or this
 * route's own raw parser read them (non-JSON content types); else the parsed JSON serialized again,
 * which is byte-identical for compact JSON (what Polar and our own deliveries send).
 */
function rawBodyOf(req: Request): string {
  const kept = (req as Request & { rawBody?: Buffer | string }).rawBody;
  if (kept !== undefined) return Buffer.isBuffer(kept) ? kept.toString('utf8') : kept;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (typeof req.body === 'string') return req.body;
  if (req.body === undefined) return '';
  return JSON.stringify(req.body);
}

export function paymentsRoutes(router: Router, deps: Deps): void {
  router.post('/polar/webhooks', express.raw({ type: () => true, limit: '1mb' }));
  endpoint(router, deps, 'post', '/polar/webhooks', async ({ req }) => {
    const secret = deps.cfg.POLAR_WEBHOOK_SECRET;
    if (!secret) throw new AuthError(404, 'Webhooks not enabled');
    const body = rawBodyOf(req);
    const headers = {
      'webhook-id': req.get('webhook-id'),
      'webhook-timestamp': req.get('webhook-timestamp'),
      'webhook-signature': req.get('webhook-signature'),
    };
    let event: { type?: unknown };
    try {
      verifyWebhook(secret, body, headers);
      event = JSON.parse(body) as { type?: unknown };
      if (!event || typeof event !== 'object' || typeof event.type !== 'string') {
        throw new Error('Invalid webhook payload: missing event type');
      }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      deps.log.warn({ requestId: req.id, reason }, 'payments webhook rejected');
      throw new AuthError(400, `Webhook Error: ${reason}`);
    }
    deps.log.info({ requestId: req.id, type: event.type, webhookId: headers['webhook-id'] }, 'payments webhook received');
    return { received: true };
  });
}
