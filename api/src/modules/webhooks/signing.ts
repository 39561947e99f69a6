/**
 * Standard Webhooks signatures as Polar sends them: `webhook-signature: v1,<base64 HMAC-SHA256 of
 * "{id}.{timestamp}.{body}">`, the HMAC key being the UTF-8 bytes of the whole secret string
 * (which is how `validateEvent` from `@polar-sh/sdk/webhooks` verifies).
 */
import { createHmac } from 'node:crypto';

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const mac = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${mac}`;
}

export function webhookHeaders(secret: string, id: string, body: string, now = new Date()): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'user-agent': 'Emporia-Webhooks/1.0',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(secret, id, timestamp, body),
  };
}
