/**
 * Webhook URLs cannot reach internal services (issue #23, part 2): with private targets not allowed
 * (the production default), every loopback, private, link-local, CGNAT, multicast or reserved form is
 * refused when saved and again when resolved at delivery; the connection goes to the address that was
 * checked; redirects are not followed; the deliveries log never shows the receiver's body.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedAddress, refusedWebhookUrl } from '../../api/src/modules/webhooks/addresses.ts';
import { WebhookEndpoint } from '../../api/src/modules/webhooks/entities.ts';
import { sendWebhook } from '../../api/src/modules/webhooks/sender.ts';
import { json, seller, startTestServer, type TestServer } from '../harness.ts';
import { bearer, until } from './receiver.ts';

const INTERNAL_URLS = [
  'http://127.0.0.1:5432/',
  'http://127.0.0.1:7233/',
  'http://localhost:8000/v1/customers/',
  'http://127.1:8000',
  'http://0x7f000001:8000',
  'http://2130706433:8000',
  'http://[::1]:8000',
  'http://user:pw@127.0.0.1:1080/email',
  'https://169.254.169.254/latest/meta-data/',
  'https://10.0.0.1/',
  'https://127.0.0.1/',
  'https://0177.0.0.1/',
  'https://172.16.5.4/',
  'https://192.168.1.1/',
  'https://100.64.0.1/',
  'https://0.0.0.0/',
  'https://224.0.0.1/',
  'https://255.255.255.255/',
  'https://[::ffff:127.0.0.1]/',
  'https://[::ffff:a9fe:a9fe]/',
  'https://[64:ff9b::7f00:1]/',
  'https://[2002:7f00:1::]/',
  'https://[fe80::1]/',
  'https://[fc00::1]/',
  'https://[ff02::1]/',
  'https://[::]/',
  'https://metadata.internal/',
  'https://printer.local/',
  'https://user@hooks.example.com/',
];

describe('webhook address rules', () => {
  it('refuses every internal form when private targets are not allowed', () => {
    for (const url of INTERNAL_URLS) expect(refusedWebhookUrl(url, false), url).not.toBeNull();
  });

  it('accepts https to public names and addresses', () => {
    for (const url of ['https://hooks.example.com/polar', 'https://8.8.8.8/hook', 'https://[2606:4700:4700::1111]/hook', 'https://[::ffff:8.8.8.8]/']) {
      expect(refusedWebhookUrl(url, false), url).toBeNull();
    }
    expect(refusedWebhookUrl('http://hooks.example.com/polar', false)).toBe('URL must use https');
  });

  it('lets local receivers work where private targets are allowed, but never plain http to the public internet or credentials', () => {
    expect(refusedWebhookUrl('http://127.0.0.1:9000/hook', true)).toBeNull();
    expect(refusedWebhookUrl('http://localhost:9000/hook', true)).toBeNull();
    expect(refusedWebhookUrl('http://example.com/hook', true)).not.toBeNull();
    expect(refusedWebhookUrl('http://user:pw@127.0.0.1:1080/', true)).toBe('URL must not contain credentials');
  });

  it('judges resolved addresses, IPv4 inside IPv6 by its IPv4 part', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '169.254.169.254', '::1', '::ffff:10.0.0.1', 'fd00::5', '64:ff9b::a00:1', '2002:a00:1::1']) {
      expect(refusedAddress(a), a).not.toBeNull();
    }
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '64:ff9b::808:808']) expect(refusedAddress(a), a).toBeNull();
  });
});

/** A plain local HTTP server that records what reached it. */
async function listener(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    hits,
    close: () => new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    }),
  };
}

describe('sending a webhook', () => {
  const send = (url: string, allowPrivate: boolean, answers: Record<string, string[]>) =>
    sendWebhook({
      url,
      headers: { 'content-type': 'application/json' },
      body: '{}',
      timeoutMs: 2_000,
      allowPrivate,
      resolve: async (host) => (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    });

  it('refuses a name that resolves to a private address, and sends nothing', async () => {
    const srv = await listener((_req, res) => res.end('secret internal page'));
    try {
      const r = await send(`https://hooks.example.test:${srv.port}/`, false, { 'hooks.example.test': ['127.0.0.1'] });
      expect(r.httpCode).toBeNull();
      expect(r.summary).toBe('not sent: hooks.example.test resolves to 127.0.0.1, not a public address');
      // One private address among public ones is enough to refuse (the connection could pick it).
      const mixed = await send(`https://mixed.example.test:${srv.port}/`, false, { 'mixed.example.test': ['8.8.8.8', '10.0.0.7'] });
      expect(mixed.summary).toMatch(/^not sent: mixed\.example\.test resolves to 10\.0\.0\.7/);
      expect(srv.hits).toEqual([]);
    } finally {
      await srv.close();
    }
  });

  it('connects to the address it checked, follows no redirect, and keeps a summary instead of the body', async () => {
    const target = await listener((_req, res) => res.end('should never be reached'));
    const srv = await listener((_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${target.port}/` }).end('moved'));
    try {
      // The name exists only in this resolver's answer: reaching the server proves the answer was used.
      const r = await send(`http://pinned.internal:${srv.port}/hook`, true, { 'pinned.internal': ['127.0.0.1'] });
      expect(srv.hits).toEqual(['POST /hook']);
      expect(r.httpCode).toBe(302);
      expect(r.summary).toBe('HTTP 302 Found · 5 B');
      expect(target.hits).toEqual([]);
    } finally {
      await srv.close();
      await target.close();
    }
  });
});

describe('webhook endpoints where private targets are not allowed', () => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'false', WEBHOOK_MAX_ATTEMPTS: '1' } });
  });
  afterAll(async () => {
    await srv?.close();
  });
  const SCOPES = ['products:read', 'products:write', 'webhooks:read', 'webhooks:write'];

  it('refuses internal URLs on create and update with a 422 on body.url', async () => {
    const s = await seller(srv.url, SCOPES);
    const api = bearer(srv.url, s.token);
    for (const url of INTERNAL_URLS) {
      const res = await api.post('/v1/webhooks/endpoints', { url, events: ['product.created'] });
      expect(res.status, url).toBe(422);
      expect((await json(res)).detail[0].loc).toEqual(['body', 'url']);
    }
    const ok = await api.post('/v1/webhooks/endpoints', { url: 'https://hooks.example.com/polar', events: ['product.created'] });
    expect(ok.status).toBe(201);
    const id = (await json(ok)).id;
    const patched = await api.patch(`/v1/webhooks/endpoints/${id}`, { url: 'https://169.254.169.254/latest/meta-data/' });
    expect(patched.status).toBe(422);
    expect((await json(patched)).detail[0]).toMatchObject({ loc: ['body', 'url'], msg: 'URL must point to a public address' });
  });

  it('checks again at delivery: an endpoint that points inside is not called, and the log says why', async () => {
    const s = await seller(srv.url, SCOPES);
    const api = bearer(srv.url, s.token);
    const internal = await listener((_req, res) => res.end('internal answer'));
    try {
      const endpoint = await json(await api.post('/v1/webhooks/endpoints', { url: 'https://hooks.example.com/polar', events: ['product.created'] }));
      // As if the rules had been looser when it was saved.
      await srv.deps.orm.em.fork().nativeUpdate(WebhookEndpoint, { id: endpoint.id }, { url: `https://127.0.0.1:${internal.port}/hook` });
      await api.post('/v1/products/', { name: 'Probe', prices: [{ amount_type: 'fixed', price_amount: 100 }] });
      const log = await until('the attempt recorded', async () => {
        const page = await json(await api.get(`/v1/webhooks/deliveries?endpoint_id=${endpoint.id}`));
        return page.items.length > 0 && page.items;
      });
      expect(log[0]).toMatchObject({ succeeded: false, http_code: null, response: 'not sent: URL must point to a public address' });
      expect(internal.hits).toEqual([]);
    } finally {
      await internal.close();
    }
  });
});
