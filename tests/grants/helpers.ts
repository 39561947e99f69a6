/**
 * Helpers for the benefit grant tests: a server wired to fake GitHub and Discord APIs, a seller, a real
 * checkout through the sandbox processor, a real file uploaded to the object store, and polling.
 */
import { createHash, randomUUID } from 'node:crypto';
import { Polar } from '@polar-sh/sdk';
import { startTestServer, type TestServer } from '../harness.ts';
import { sellerWithSdk } from '../catalogue/helpers-c.ts';
import { call, until as confirmUntil } from '../confirm/helpers.ts';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github-server.ts';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord-server.ts';
import { OutboxEvent } from '../../api/src/modules/webhooks/entities.ts';

export { call };

/** Polls `fn` until it returns a truthy value (grants happen in background workflows; generous for a busy CI machine). */
export const until = <T>(fn: () => Promise<T | null | undefined | false>, timeoutMs = 120_000): Promise<T> => confirmUntil(fn, timeoutMs);

export const GRANT_SCOPES = [
  'checkouts:read', 'checkouts:write',
  'products:read', 'products:write',
  'benefits:read', 'benefits:write',
  'customers:read', 'customers:write',
  'customer_sessions:write',
  'orders:read', 'subscriptions:read',
  'license_keys:read',
  'files:read', 'files:write',
  'meters:read', 'meters:write',
  'events:read',
  'organizations:read',
];

export interface GrantEnv {
  srv: TestServer;
  github: FakeGitHub;
  discord: FakeDiscord;
  close(): Promise<void>;
}

export async function startGrantEnv(): Promise<GrantEnv> {
  const github = await startFakeGitHub();
  const discord = await startFakeDiscord();
  const srv = await startTestServer({
    env: {
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: github.token,
      DISCORD_API_URL: discord.url,
      DISCORD_BOT_TOKEN: discord.token,
      DATABASE_POOL_MAX: '8',
    },
  });
  return {
    srv,
    github,
    discord,
    async close() {
      await srv.close();
      await github.close();
      await discord.close();
    },
  };
}

export type Seller = Awaited<ReturnType<typeof sellerWithSdk>>;
export const grantSeller = (srv: TestServer): Promise<Seller> => sellerWithSdk(srv, GRANT_SCOPES);

export async function createBenefit(srv: TestServer, s: Seller, body: Record<string, unknown>): Promise<string> {
  const res = await call(srv.url, s.token, 'POST', '/v1/benefits/', body);
  if (res.status !== 201) throw new Error(`benefit: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

/** A one-time product at 1000 (or a monthly one) carrying the benefits. */
export async function productWith(srv: TestServer, s: Seller, benefitIds: string[], recurring = false): Promise<string> {
  const res = await call(srv.url, s.token, 'POST', '/v1/products/', {
    name: `Product ${randomUUID().slice(0, 6)}`,
    recurring_interval: recurring ? 'month' : null,
    prices: [{ amount_type: 'fixed', price_amount: 1000, price_currency: 'usd' }],
  });
  if (res.status !== 201) throw new Error(`product: ${res.status} ${JSON.stringify(res.body)}`);
  const linked = await call(srv.url, s.token, 'POST', `/v1/products/${res.body.id}/benefits`, { benefits: benefitIds });
  if (linked.status !== 200) throw new Error(`product benefits: ${linked.status} ${JSON.stringify(linked.body)}`);
  return res.body.id as string;
}

export interface Purchase {
  checkoutId: string;
  customerId: string;
  orderId: string;
  subscriptionId: string | null;
  /** A full customer session of the buyer (seller-created). */
  token: string;
  polar: Polar;
  security: { customerSession: string };
}

/** A buyer pays for the product through the hosted checkout (sandbox card); waits for the order. */
export async function buy(srv: TestServer, s: Seller, productId: string, email = `buyer-${randomUUID().slice(0, 8)}@example.com`): Promise<Purchase> {
  const created = await call(srv.url, s.token, 'POST', '/v1/checkouts/', { product_id: productId });
  if (created.status !== 201) throw new Error(`checkout: ${created.status} ${JSON.stringify(created.body)}`);
  const confirmed = await call(srv.url, null, 'POST', `/v1/checkouts/client/${created.body.client_secret}/confirm`, {
    customer_email: email,
    customer_name: 'Bea Buyer',
    customer_billing_address: { country: 'US' },
    confirmation_token_id: 'tok_visa',
  });
  if (confirmed.status !== 200) throw new Error(`confirm: ${confirmed.status} ${JSON.stringify(confirmed.body)}`);
  const order = await until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/orders/?checkout_id=${created.body.id}`);
    return res.body?.items?.[0] as { id: string; subscription_id: string | null } | undefined;
  });
  // The token a confirmation returns reaches only that checkout's purchase; these tests act as the
  // customer in the whole portal (linking accounts, every grant), so they use a seller-created session.
  const session = await call(srv.url, s.token, 'POST', '/v1/customer-sessions/', { customer_id: confirmed.body.customer_id });
  if (session.status !== 201) throw new Error(`customer session: ${session.status} ${JSON.stringify(session.body)}`);
  const token = session.body.token as string;
  return {
    checkoutId: created.body.id,
    customerId: confirmed.body.customer_id,
    orderId: order.id,
    subscriptionId: order.subscription_id,
    token,
    polar: new Polar({ accessToken: token, serverURL: srv.url }),
    security: { customerSession: token },
  };
}

export interface GrantRead {
  id: string;
  is_granted: boolean;
  is_revoked: boolean;
  granted_at: string | null;
  revoked_at: string | null;
  order_id: string | null;
  subscription_id: string | null;
  customer_id: string;
  benefit_id: string;
  properties: Record<string, any>;
}

/** The customer's grant of a benefit (seller API), once `ready` holds. */
export async function grantOf(
  srv: TestServer,
  s: Seller,
  benefitId: string,
  customerId: string,
  ready: (g: GrantRead) => boolean = (g) => g.is_granted,
  timeoutMs = 120_000,
): Promise<GrantRead> {
  return until(async () => {
    const res = await call(srv.url, s.token, 'GET', `/v1/benefits/${benefitId}/grants?customer_id=${customerId}`);
    const g = res.body?.items?.[0] as GrantRead | undefined;
    return g && ready(g) ? g : null;
  }, timeoutMs);
}

/** Webhook events of a type written to the outbox for the organization, as their payload data. */
export async function outboxData(srv: TestServer, organizationId: string, type: string): Promise<Record<string, any>[]> {
  const rows = await srv.deps.orm.em.fork().find(OutboxEvent, { organizationId, type }, { orderBy: { createdAt: 'asc' } });
  return rows.map((r) => r.data as Record<string, any>);
}

/** Uploads real bytes as a `downloadable` file through the files API (presigned part PUT + completion). */
export async function uploadFile(srv: TestServer, s: Seller, name: string, data: Buffer): Promise<string> {
  const sha = createHash('sha256').update(data).digest('base64');
  const created = await call(srv.url, s.token, 'POST', '/v1/files/', {
    name,
    mime_type: 'text/plain',
    size: data.length,
    checksum_sha256_base64: sha,
    service: 'downloadable',
    upload: { parts: [{ number: 1, chunk_start: 0, chunk_end: data.length, checksum_sha256_base64: sha }] },
  });
  if (created.status !== 201) throw new Error(`file: ${created.status} ${JSON.stringify(created.body)}`);
  const part = created.body.upload.parts[0];
  const put = await fetch(part.url, { method: 'PUT', body: new Uint8Array(data), headers: part.headers });
  if (put.status !== 200) throw new Error(`part upload: ${put.status} ${await put.text()}`);
  const done = await call(srv.url, s.token, 'POST', `/v1/files/${created.body.id}/uploaded`, {
    id: created.body.upload.id,
    path: created.body.upload.path,
    parts: [{ number: 1, checksum_etag: put.headers.get('etag'), checksum_sha256_base64: sha }],
  });
  if (done.status !== 200) throw new Error(`file completion: ${done.status} ${JSON.stringify(done.body)}`);
  return created.body.id as string;
}
