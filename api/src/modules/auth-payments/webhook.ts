/**
 * The payments plugin's webhook verification: Standard Webhooks signed bodies (headers webhook-id,
 * webhook-timestamp, webhook-signature with space-separated `v1,<base64>` entries; HMAC-SHA256 keyed
 * with the UTF-8 bytes of the whole secret, as `validateEvent` from `@polar-sh/sdk/webhooks` does).
 */
import { timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { signWebhook } from '../webhooks/signing.ts';

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
export function rawBodyOf(req: Request): string {
  const kept = (req as Request & { rawBody?: Buffer | string }).rawBody;
  if (kept !== undefined) return Buffer.isBuffer(kept) ? kept.toString('utf8') : kept;
  if (Buffer.isBuffer(req.body)) return req.body.toString('utf8');
  if (typeof req.body === 'string') return req.body;
  if (req.body === undefined) return '';
  return JSON.stringify(req.body);
}
