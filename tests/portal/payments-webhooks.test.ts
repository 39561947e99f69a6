/**
 * The auth service's payments webhook receiver (`POST /api/auth/polar/webhooks`) through raw HTTP:
 * Standard Webhooks deliveries signed with `api/src/modules/webhooks/signing.ts`, and every error
 * message of the plugin (`{code, message}` bodies).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeOf } from '../../api/src/auth/errors.ts';
import { signWebhook, webhookHeaders } from '../../api/src/modules/webhooks/signing.ts';
import { startTestServer, type TestServer } from '../harness.ts';

const SECRET = `whsec_${randomUUID().replace(/-/g, '')}`;
let srv: TestServer;
let disabled: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { POLAR_WEBHOOK_SECRET: SECRET } });
  disabled = await startTestServer({ worker: false });
});
afterAll(async () => {
  await srv?.close();
  await disabled?.close();
});

const event = JSON.stringify({ type: 'customer.updated', timestamp: new Date().toISOString(), data: { id: randomUUID() } });

async function post(url: string, body: string, headers: Record<string, string>) {
  const res = await fetch(`${url}/api/auth/polar/webhooks`, { method: 'POST', headers, body });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const webhookError = (reason: string) => ({ code: codeOf(`Webhook Error: ${reason}`), message: `Webhook Error: ${reason}` });

describe('POST /api/auth/polar/webhooks', () => {
  it('accepts a correctly signed delivery', async () => {
    const r = await post(srv.url, event, webhookHeaders(SECRET, `msg_${randomUUID()}`, event));
    expect(r).toEqual({ status: 200, body: { received: true } });
  });

  it('accepts any matching entry of a space-separated signature list, and a non-JSON content type', async () => {
    const headers = webhookHeaders(SECRET, 'msg_list', event);
    headers['webhook-signature'] = `v1,bm90LWl0 v2,${headers['webhook-signature']!.slice(3)} ${headers['webhook-signature']}`;
    expect((await post(srv.url, event, headers)).body).toEqual({ received: true });
    const pretty = JSON.stringify(JSON.parse(event), null, 2);
    const text = { ...webhookHeaders(SECRET, 'msg_text', pretty), 'content-type': 'text/plain' };
    expect((await post(srv.url, pretty, text)).body).toEqual({ received: true });
  });

  it('answers 404 "Webhooks not enabled" without a configured secret', async () => {
    const r = await post(disabled.url, event, webhookHeaders(SECRET, 'msg_1', event));
    expect(r).toEqual({ status: 404, body: { code: 'WEBHOOKS_NOT_ENABLED', message: 'Webhooks not enabled' } });
  });

  it('refuses deliveries with missing headers', async () => {
    const full = webhookHeaders(SECRET, 'msg_2', event);
    for (const drop of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const headers = { ...full };
      delete headers[drop];
      const r = await post(srv.url, event, headers);
      expect(r, drop).toEqual({ status: 400, body: webhookError('Missing required headers') });
    }
  });

  it('refuses a timestamp that is not a number', async () => {
    const headers = { ...webhookHeaders(SECRET, 'msg_3', event), 'webhook-timestamp': 'yesterday' };
    expect(await post(srv.url, event, headers)).toEqual({ status: 400, body: webhookError('Invalid Signature Headers') });
  });

  it('refuses timestamps more than 300 s away, either way', async () => {
    const old = webhookHeaders(SECRET, 'msg_4', event, new Date(Date.now() - 301_000));
    expect(await post(srv.url, event, old)).toEqual({ status: 400, body: webhookError('Message timestamp too old') });
    const future = webhookHeaders(SECRET, 'msg_5', event, new Date(Date.now() + 301_000));
    expect(await post(srv.url, event, future)).toEqual({ status: 400, body: webhookError('Message timestamp too new') });
    // Within the tolerance both ways is fine.
    const slightlyOld = webhookHeaders(SECRET, 'msg_6', event, new Date(Date.now() - 200_000));
    expect((await post(srv.url, event, slightlyOld)).status).toBe(200);
    const slightlyNew = webhookHeaders(SECRET, 'msg_7', event, new Date(Date.now() + 200_000));
    expect((await post(srv.url, event, slightlyNew)).status).toBe(200);
  });

  it('refuses a tampered body, a wrong secret, another id and non-v1 signatures', async () => {
    const headers = webhookHeaders(SECRET, 'msg_8', event);
    const tampered = event.replace('customer.updated', 'customer.deleted');
    expect(await post(srv.url, tampered, headers)).toEqual({ status: 400, body: webhookError('No matching signature found') });

    const wrongSecret = webhookHeaders(`${SECRET}x`, 'msg_9', event);
    expect((await post(srv.url, event, wrongSecret)).body).toEqual(webhookError('No matching signature found'));

    const otherId = { ...headers, 'webhook-id': 'msg_other' };
    expect((await post(srv.url, event, otherId)).body).toEqual(webhookError('No matching signature found'));

    const ts = Number(headers['webhook-timestamp']);
    const v2 = { ...headers, 'webhook-signature': signWebhook(SECRET, 'msg_8', ts, event).replace(/^v1,/, 'v2,') };
    expect((await post(srv.url, event, v2)).body).toEqual(webhookError('No matching signature found'));
  });

  it('refuses a signed body that is not an event', async () => {
    const body = JSON.stringify({ hello: 'world' });
    const r = await post(srv.url, body, webhookHeaders(SECRET, 'msg_10', body));
    expect(r.status).toBe(400);
    expect(r.body.message).toMatch(/^Webhook Error: /);
  });
});
