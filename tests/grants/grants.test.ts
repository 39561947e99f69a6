/**
 * Benefit grants through real checkouts: the checkout-confirm workflow requests the grants, the
 * `benefit-grant:<benefit>:<customer>` workflows apply them (license key, custom note, meter credit
 * event, downloadable files, GitHub collaborator invitation, Discord role through local servers that
 * speak those APIs) and revoke them; grant webhooks land in the outbox. The portal lists downloadables
 * with short-lived links that redirect to the object store, and lets a customer pick the GitHub /
 * Discord account of their own grants only.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResourceNotFound } from '@polar-sh/sdk/models/errors/resourcenotfound.js';
import { HTTPValidationError } from '@polar-sh/sdk/models/errors/httpvalidationerror.js';
import { WebhookBenefitGrantCreatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookbenefitgrantcreatedpayload.js';
import { requestBenefitAction } from '../../api/src/modules/benefits/lifecycle.ts';
import { signDownloadToken } from '../../api/src/modules/customer-portal/downloadables.ts';
import {
  buy,
  call,
  createBenefit,
  grantOf,
  grantSeller,
  outboxData,
  productWith,
  startGrantEnv,
  until,
  uploadFile,
  type GrantEnv,
  type Purchase,
  type Seller,
} from './helpers.ts';

/** Per-test limit: the grants run in background workflows, and CI machines are busy. */
const SLOW = 240_000;

let env: GrantEnv;
let s: Seller;

beforeAll(async () => {
  env = await startGrantEnv();
  s = await grantSeller(env.srv);
});
afterAll(async () => {
  await env?.close();
});

/** The path of a link from the portal, against this test server (PUBLIC_URL names the default host). */
const onServer = (link: string) => `${env.srv.url}${new URL(link).pathname}`;

describe('license keys, custom, meter credit and downloadables', { timeout: SLOW }, () => {
  let ids: { license: string; custom: string; credit: string; files: string };
  let meterId: string;
  let fileId: string;
  let archivedFileId: string;
  let purchase: Purchase;
  /** Just before the purchase: the license key's one-year expiry counts from its grant, after this. */
  let boughtAt: Date;
  let productId: string;
  const content = randomBytes(2048);

  beforeAll(async () => {
    const { srv } = env;
    const meter = await call(srv.url, s.token, 'POST', '/v1/meters/', {
      name: 'API calls',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'count' },
    });
    expect(meter.status).toBe(201);
    meterId = meter.body.id;
    fileId = await uploadFile(srv, s, 'handbook.txt', content);
    archivedFileId = await uploadFile(srv, s, 'old-edition.txt', Buffer.from('old'));
    ids = {
      license: await createBenefit(srv, s, {
        type: 'license_keys',
        description: 'License',
        properties: { prefix: 'emp', expires: { ttl: 1, timeframe: 'year' }, activations: { limit: 3, enable_customer_admin: true }, limit_usage: 50 },
      }),
      custom: await createBenefit(srv, s, { type: 'custom', description: 'Support', properties: { note: 'Mail vip@example.com' } }),
      credit: await createBenefit(srv, s, { type: 'meter_credit', description: '1000 calls', properties: { units: 1000, meter_id: meterId, rollover: false } }),
      files: await createBenefit(srv, s, {
        type: 'downloadables',
        description: 'The handbook',
        properties: { files: [fileId, archivedFileId], archived: { [archivedFileId]: true } },
      }),
    };
    productId = await productWith(srv, s, Object.values(ids));
    boughtAt = new Date();
    purchase = await buy(srv, s, productId);
  });

  it('grants every benefit of a bought product, scoped to the order', async () => {
    const { srv } = env;
    for (const id of Object.values(ids)) {
      const g = await grantOf(srv, s, id, purchase.customerId);
      expect(g).toMatchObject({ is_granted: true, is_revoked: false, order_id: purchase.orderId, subscription_id: null });
    }

    // License key: prefix + upper-case UUID, limits and expiry from the benefit.
    const keys = await call(srv.url, s.token, 'GET', `/v1/license-keys?benefit_id=${ids.license}`);
    expect(keys.body.items).toHaveLength(1);
    const key = keys.body.items[0];
    expect(key).toMatchObject({ customer_id: purchase.customerId, status: 'granted', limit_activations: 3, limit_usage: 50 });
    expect(key.key).toMatch(/^EMP-[0-9A-F]{8}-[0-9A-F]{4}-4[0-9A-F]{3}-[89AB][0-9A-F]{3}-[0-9A-F]{12}$/);
    // One calendar year after the key was granted, which happened between boughtAt and now.
    const oneYearAfter = (d: Date) => {
      const y = new Date(d);
      y.setUTCFullYear(y.getUTCFullYear() + 1);
      return y.getTime();
    };
    const expires = new Date(key.expires_at).getTime();
    expect(expires).toBeGreaterThanOrEqual(oneYearAfter(boughtAt));
    expect(expires).toBeLessThanOrEqual(oneYearAfter(new Date()));

    // Custom: the note is shown to the customer in the portal.
    const portal = await purchase.polar.customerPortal.benefitGrants.list(purchase.security, { benefitId: ids.custom });
    expect(portal.result.items).toHaveLength(1);
    expect(portal.result.items[0]!.benefit.properties).toEqual({ note: 'Mail vip@example.com' });

    // Meter credit: a `meter_credited` system event for the customer with the units.
    const events = await call(srv.url, s.token, 'GET', `/v1/events/?name=meter_credited&customer_id=${purchase.customerId}`);
    expect(events.body.items).toHaveLength(1);
    expect(events.body.items[0]).toMatchObject({ source: 'system', customer_id: purchase.customerId, metadata: { meter_id: meterId, units: 1000 } });

    // Downloadables: the active files only (the archived one is not given to new buyers).
    const files = await grantOf(srv, s, ids.files, purchase.customerId);
    expect(files.properties.files).toEqual([fileId]);

    // customer.state_changed follows the grants.
    await until(async () =>
      (await outboxData(srv, s.organization.id, 'customer.state_changed')).some(
        (d) => d.id === purchase.customerId && d.granted_benefits.length === 4,
      ),
    );
  });

  it('lists the downloadables in the portal; the link redirects to the real file in the object store', async () => {
    const list = await purchase.polar.customerPortal.downloadables.list(purchase.security, {});
    expect(list.result.pagination.totalCount).toBe(1);
    const [d] = list.result.items;
    expect(d).toMatchObject({ benefitId: ids.files, file: { id: fileId, name: 'handbook.txt', size: content.length, isUploaded: true } });
    expect(d!.file.download.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(d!.file.download.url).toContain('/v1/customer-portal/downloadables/');

    // The same id on every listing; filters by benefit.
    const again = await purchase.polar.customerPortal.downloadables.list(purchase.security, { benefitId: ids.license });
    expect(again.result.items).toHaveLength(0);

    const redirect = await fetch(onServer(d!.file.download.url), { redirect: 'manual' });
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(new URL(location).origin).toBe(new URL(env.srv.deps.cfg.S3_ENDPOINT).origin);
    const file = await fetch(location);
    expect(file.status).toBe(200);
    expect(Buffer.from(await file.arrayBuffer()).equals(content)).toBe(true);
    expect(file.headers.get('content-disposition')).toContain('handbook.txt');

    // Another customer's session sees none of it.
    const other = await buy(env.srv, s, await productWith(env.srv, s, [ids.custom]));
    expect((await other.polar.customerPortal.downloadables.list(other.security, {})).result.items).toHaveLength(0);
  });

  it('answers 400 for a malformed or tampered token, 404 for an unknown downloadable, 410 once expired', async () => {
    const { srv } = env;
    const get = (token: string) => fetch(`${srv.url}/v1/customer-portal/downloadables/${token}`, { redirect: 'manual' });
    const secret = srv.deps.cfg.SECRET;
    const exp = Math.floor(Date.now() / 1000) + 600;

    const malformed = await get('not-a-token');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ error: 'BadRequest' });

    const valid = signDownloadToken(secret, { c: purchase.customerId, b: ids.files, f: fileId, e: exp });
    const [payload] = valid.split('.');
    const forged = signDownloadToken('another-secret-another-secret-another', { c: purchase.customerId, b: ids.files, f: fileId, e: exp });
    expect((await get(`${payload}.${forged.split('.')[1]}`)).status).toBe(400);

    const unknown = await get(signDownloadToken(secret, { c: purchase.customerId, b: ids.files, f: randomUUID(), e: exp }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: 'ResourceNotFound' });

    const expired = await get(signDownloadToken(secret, { c: purchase.customerId, b: ids.files, f: fileId, e: exp - 3600 }));
    expect(expired.status).toBe(410);
    expect(await expired.json()).toMatchObject({ error: 'ResourceUnavailable' });

    expect((await get(valid)).status).toBe(302);
  });

  it('revokes every benefit: key revoked, credit taken back, files gone, revoked webhooks', async () => {
    const { srv } = env;
    const list = await purchase.polar.customerPortal.downloadables.list(purchase.security, {});
    const link = list.result.items[0]!.file.download.url;

    await requestBenefitAction(srv.deps, 'revoke', {
      customerId: purchase.customerId,
      productId,
      subscriptionId: null,
      orderId: purchase.orderId,
    });
    for (const id of Object.values(ids)) {
      const g = await grantOf(srv, s, id, purchase.customerId, (x) => x.is_revoked);
      expect(g).toMatchObject({ is_granted: false, granted_at: null });
    }
    const keys = await call(srv.url, s.token, 'GET', `/v1/license-keys?benefit_id=${ids.license}`);
    expect(keys.body.items[0].status).toBe('revoked');

    const events = await call(srv.url, s.token, 'GET', `/v1/events/?name=meter_credited&customer_id=${purchase.customerId}`);
    expect(events.body.items.map((e: { metadata: { units: number } }) => e.metadata.units).sort()).toEqual([-1000, 1000]);

    expect((await purchase.polar.customerPortal.downloadables.list(purchase.security, {})).result.items).toHaveLength(0);
    expect((await fetch(onServer(link), { redirect: 'manual' })).status).toBe(404);

    // Granting again (a new request after the workflow finished) re-grants the same grant row.
    await requestBenefitAction(srv.deps, 'grant', { customerId: purchase.customerId, productId, subscriptionId: null, orderId: purchase.orderId });
    const regranted = await grantOf(srv, s, ids.license, purchase.customerId, (g) => g.is_granted);
    const keysAfter = await call(srv.url, s.token, 'GET', `/v1/license-keys?benefit_id=${ids.license}`);
    expect(keysAfter.body.items).toHaveLength(1);
    expect(keysAfter.body.items[0]).toMatchObject({ id: regranted.properties.license_key_id, status: 'granted' });

    // Webhooks in the outbox: created once per grant, revoked once, updated on the re-grant.
    const created = await outboxData(srv, s.organization.id, 'benefit_grant.created');
    const revoked = await outboxData(srv, s.organization.id, 'benefit_grant.revoked');
    const mine = (rows: Record<string, any>[]) => rows.filter((d) => d.customer_id === purchase.customerId);
    expect(mine(created).map((d) => d.benefit_id).sort()).toEqual(Object.values(ids).sort());
    expect(mine(revoked).map((d) => d.benefit_id).sort()).toEqual(Object.values(ids).sort());
    expect(mine(revoked).every((d) => d.is_revoked && d.benefit?.id === d.benefit_id)).toBe(true);
    await until(async () => {
      const updated = await outboxData(srv, s.organization.id, 'benefit_grant.updated');
      return mine(updated).some((d) => d.benefit_id === ids.license && d.is_granted);
    });
  });

  it('applies requests for one benefit and customer in order, even in a burst', async () => {
    const { srv } = env;
    const product = await productWith(srv, s, [ids.custom]);
    const buyer = await buy(srv, s, product);
    await grantOf(srv, s, ids.custom, buyer.customerId);
    const scope = { customerId: buyer.customerId, productId: product, subscriptionId: null, orderId: buyer.orderId };
    for (const action of ['revoke', 'grant', 'revoke', 'grant', 'revoke'] as const) await requestBenefitAction(srv.deps, action, scope);
    const mine = async (type: string) =>
      (await outboxData(srv, s.organization.id, type)).filter((d) => d.customer_id === buyer.customerId && d.benefit_id === ids.custom);
    await until(async () => (await mine('benefit_grant.revoked')).length === 3);
    expect(await mine('benefit_grant.updated')).toHaveLength(2);
    const g = await grantOf(srv, s, ids.custom, buyer.customerId, () => true);
    expect(g).toMatchObject({ is_granted: false, is_revoked: true });
  });
});

describe('benefit changes, subscriptions and webhook payloads', { timeout: SLOW }, () => {
  it('re-applies a changed benefit to granted grants and revokes the grants of a deleted one', async () => {
    const { srv } = env;
    const first = await uploadFile(srv, s, 'v1.txt', Buffer.from('version one'));
    const second = await uploadFile(srv, s, 'v2.txt', Buffer.from('version two'));
    const files = await createBenefit(srv, s, { type: 'downloadables', description: 'Files', properties: { files: [first] } });
    const license = await createBenefit(srv, s, { type: 'license_keys', description: 'Key', properties: { limit_usage: 5 } });
    const p = await buy(srv, s, await productWith(srv, s, [files, license]));
    await grantOf(srv, s, files, p.customerId);
    await grantOf(srv, s, license, p.customerId);

    expect((await call(srv.url, s.token, 'PATCH', `/v1/benefits/${files}`, { type: 'downloadables', properties: { files: [first, second] } })).status).toBe(200);
    expect((await call(srv.url, s.token, 'PATCH', `/v1/benefits/${license}`, { type: 'license_keys', properties: { limit_usage: 9 } })).status).toBe(200);
    await grantOf(srv, s, files, p.customerId, (g) => g.properties.files?.length === 2);
    const names = async () => (await p.polar.customerPortal.downloadables.list(p.security, {})).result.items.map((d) => d.file.name).sort();
    expect(await names()).toEqual(['v1.txt', 'v2.txt']);
    await until(async () => {
      const keys = await call(srv.url, s.token, 'GET', `/v1/license-keys?benefit_id=${license}`);
      return keys.body.items[0]?.limit_usage === 9;
    });

    expect((await call(srv.url, s.token, 'DELETE', `/v1/benefits/${files}`)).status).toBe(204);
    expect(await names()).toEqual([]);
    const revoked = await until(async () => {
      const rows = (await outboxData(srv, s.organization.id, 'benefit_grant.revoked')).filter((d) => d.benefit_id === files);
      return rows.length ? rows : null;
    });
    expect(revoked).toHaveLength(1);
    expect(revoked[0]).toMatchObject({ customer_id: p.customerId, is_revoked: true, is_granted: false });
  });

  it('revokes the grants of a deleted customer', async () => {
    const { srv } = env;
    const note = await createBenefit(srv, s, { type: 'custom', description: 'Perk', properties: { note: 'Thanks' } });
    const p = await buy(srv, s, await productWith(srv, s, [note]));
    await grantOf(srv, s, note, p.customerId);
    expect((await call(srv.url, s.token, 'DELETE', `/v1/customers/${p.customerId}`)).status).toBe(204);
    const g = await grantOf(srv, s, note, p.customerId, (x) => x.is_revoked);
    expect(g.is_granted).toBe(false);
  });

  it('still revokes the grants of a deleted customer when Temporal could not be reached at the moment of the deletion', async () => {
    const { srv } = env;
    const note = await createBenefit(srv, s, { type: 'custom', description: 'Perk kept by a blip', properties: { note: 'Thanks' } });
    const p = await buy(srv, s, await productWith(srv, s, [note]));
    await grantOf(srv, s, note, p.customerId);
    // The next workflow start fails, as during a Temporal outage between the commit and the start.
    const client = srv.deps.temporal.workflow;
    const start = client.start.bind(client);
    let refused = 0;
    client.start = (async (...args: Parameters<typeof start>) => {
      if (args[0] === 'benefitRequestsWorkflow' && refused++ === 0) throw new Error('Temporal unavailable');
      return start(...args);
    }) as typeof start;
    try {
      expect((await call(srv.url, s.token, 'DELETE', `/v1/customers/${p.customerId}`)).status).toBe(204);
      expect(refused).toBe(1);
      // The start was recorded with the deletion: the worker's sweeper starts it and the grant is revoked.
      const g = await grantOf(srv, s, note, p.customerId, (x) => x.is_revoked);
      expect(g.is_granted).toBe(false);
      expect(refused).toBe(2);
    } finally {
      client.start = start;
    }
  });

  it('scopes the grants of a subscription to it, credits meter units each cycle, and its webhooks parse with the SDK', async () => {
    const { srv } = env;
    const license = await createBenefit(srv, s, { type: 'license_keys', description: 'Monthly key', properties: { prefix: 'sub' } });
    const meter = await call(srv.url, s.token, 'POST', '/v1/meters/', {
      name: 'Tokens',
      filter: { conjunction: 'and', clauses: [] },
      aggregation: { func: 'count' },
    });
    const credit = await createBenefit(srv, s, {
      type: 'meter_credit',
      description: '500 tokens a month',
      properties: { units: 500, meter_id: meter.body.id, rollover: true },
    });
    const productId = await productWith(srv, s, [license, credit], true);
    const p = await buy(srv, s, productId);
    expect(p.subscriptionId).not.toBeNull();
    const g = await grantOf(srv, s, license, p.customerId);
    expect(g).toMatchObject({ subscription_id: p.subscriptionId, order_id: null });

    const [data] = (await outboxData(srv, s.organization.id, 'benefit_grant.created')).filter((d) => d.id === g.id);
    const parsed = WebhookBenefitGrantCreatedPayload$inboundSchema.parse({ type: 'benefit_grant.created', data });
    expect(parsed.data).toMatchObject({ id: g.id, benefitId: license, customerId: p.customerId, isGranted: true, subscriptionId: p.subscriptionId });
    expect(parsed.data.benefit.id).toBe(license);

    // A renewal's order credits the units again (once per order); revoking takes all of them back.
    await grantOf(srv, s, credit, p.customerId);
    const scope = { customerId: p.customerId, productId, subscriptionId: p.subscriptionId, orderId: randomUUID() };
    await requestBenefitAction(srv.deps, 'grant', scope);
    await requestBenefitAction(srv.deps, 'grant', scope);
    await requestBenefitAction(srv.deps, 'revoke', scope);
    await grantOf(srv, s, credit, p.customerId, (x) => x.is_revoked);
    const events = await call(srv.url, s.token, 'GET', `/v1/events/?name=meter_credited&customer_id=${p.customerId}&sorting=timestamp`);
    expect(events.body.items.map((e: { metadata: { units: number } }) => e.metadata.units)).toEqual([500, 500, -1000]);
  });
});

describe('GitHub repository access', { timeout: SLOW }, () => {
  it('stays pending until the customer picks an account, then invites it (retrying a 5xx) and removes it on revoke', async () => {
    const { srv, github } = env;
    github.addRepository('acme', 'engine');
    const octo = github.addUser(`octo-${randomUUID().slice(0, 6)}`);
    const benefitId = await createBenefit(srv, s, {
      type: 'github_repository',
      description: 'Source access',
      properties: { repository_owner: 'acme', repository_name: 'engine', permission: 'maintain' },
    });
    const productId = await productWith(srv, s, [benefitId]);
    const p = await buy(srv, s, productId);

    // No account yet: the grant exists (benefit_grant.created) but is not granted.
    const pending = await grantOf(srv, s, benefitId, p.customerId, () => true);
    expect(pending).toMatchObject({ is_granted: false, is_revoked: false });
    await until(async () => (await outboxData(srv, s.organization.id, 'benefit_grant.created')).some((d) => d.id === pending.id));

    // An account GitHub does not know is refused.
    await expect(
      p.polar.customerPortal.benefitGrants.update(p.security, {
        id: pending.id,
        customerBenefitGrantUpdate: { benefitType: 'github_repository', properties: { accountId: 'no-such-user-xyz' } },
      }),
    ).rejects.toBeInstanceOf(HTTPValidationError);

    github.failNext(1, 502, 'PUT');
    const before = github.requests.length;
    const updated = await p.polar.customerPortal.benefitGrants.update(p.security, {
      id: pending.id,
      customerBenefitGrantUpdate: { benefitType: 'github_repository', properties: { accountId: octo.login } },
    });
    expect(updated.properties).toMatchObject({ accountId: String(octo.id) });

    const granted = await grantOf(srv, s, benefitId, p.customerId);
    expect(granted.properties).toMatchObject({
      account_id: String(octo.id),
      account_username: octo.login,
      repository_owner: 'acme',
      repository_name: 'engine',
      permission: 'maintain',
    });
    expect(github.invitations('acme', 'engine')).toEqual([expect.objectContaining({ login: octo.login, permission: 'maintain' })]);
    // The first invitation attempt met a 502 and was retried.
    const puts = github.requests.slice(before).filter((r) => r.method === 'PUT' && r.path === `/repos/acme/engine/collaborators/${octo.login}`);
    expect(puts.length).toBeGreaterThanOrEqual(2);
    expect(puts.at(-1)!.body).toEqual({ permission: 'maintain' });

    // The customer accepts; revoking the order's benefits removes the collaborator.
    github.accept('acme', 'engine', octo.login);
    await requestBenefitAction(srv.deps, 'revoke', { customerId: p.customerId, productId, subscriptionId: null, orderId: p.orderId });
    await grantOf(srv, s, benefitId, p.customerId, (g) => g.is_revoked);
    expect(github.collaborators('acme', 'engine')).not.toContain(octo.login);
    expect(github.requests.some((r) => r.method === 'DELETE' && r.path === `/repos/acme/engine/collaborators/${octo.login}`)).toBe(true);
  });

  it('records the error when the repository does not exist, and does not grant', async () => {
    const { srv, github } = env;
    const login = github.addUser(`dev-${randomUUID().slice(0, 6)}`).login;
    const benefitId = await createBenefit(srv, s, {
      type: 'github_repository',
      description: 'Gone repo',
      properties: { repository_owner: 'acme', repository_name: 'missing', permission: 'pull' },
    });
    const p = await buy(srv, s, await productWith(srv, s, [benefitId]));
    const pending = await grantOf(srv, s, benefitId, p.customerId, () => true);
    await p.polar.customerPortal.benefitGrants.update(p.security, {
      id: pending.id,
      customerBenefitGrantUpdate: { benefitType: 'github_repository', properties: { accountId: login } },
    });
    const failed = await grantOf(srv, s, benefitId, p.customerId, (g) => typeof g.properties.error === 'string');
    expect(failed.is_granted).toBe(false);
    expect(failed.properties.error).toMatch(/404/);
  });
});

describe('Discord roles', { timeout: SLOW }, () => {
  it('adds the role to the chosen account (after a 500) and removes it on revoke', async () => {
    const { srv, discord } = env;
    const guildId = String(100_000_000_000 + Math.floor(Math.random() * 1e9));
    const roleId = '700000000000000001';
    const userId = String(200_000_000_000 + Math.floor(Math.random() * 1e9));
    discord.addUser(userId, 'bea');
    discord.addGuild(guildId, [roleId], [userId]);
    const benefitId = await createBenefit(srv, s, {
      type: 'discord',
      description: 'Members role',
      properties: { guild_id: guildId, role_id: roleId, guild_token: 'bot-install-token' },
    });
    const productId = await productWith(srv, s, [benefitId]);
    const p = await buy(srv, s, productId);
    const pending = await grantOf(srv, s, benefitId, p.customerId, () => true);
    expect(pending.is_granted).toBe(false);

    discord.failNext(1, 500, 'PUT');
    await p.polar.customerPortal.benefitGrants.update(p.security, {
      id: pending.id,
      customerBenefitGrantUpdate: { benefitType: 'discord', properties: { accountId: userId } },
    });
    const granted = await grantOf(srv, s, benefitId, p.customerId);
    expect(granted.properties).toMatchObject({ account_id: userId, account_username: 'bea', guild_id: guildId, role_id: roleId });
    expect(discord.roles(guildId, userId)).toEqual([roleId]);
    const rolePath = `/guilds/${guildId}/members/${userId}/roles/${roleId}`;
    // The first role assignment met a 500 and was retried.
    expect(discord.requests.filter((r) => r.method === 'PUT' && r.path === rolePath).length).toBeGreaterThanOrEqual(2);

    await requestBenefitAction(srv.deps, 'revoke', { customerId: p.customerId, productId, subscriptionId: null, orderId: p.orderId });
    await grantOf(srv, s, benefitId, p.customerId, (g) => g.is_revoked);
    expect(discord.roles(guildId, userId)).toEqual([]);
    expect(discord.requests.some((r) => r.method === 'DELETE' && r.path === rolePath)).toBe(true);
  });

  it('lets a customer update only their own grants (another customer’s is not found)', async () => {
    const { srv, discord } = env;
    const guildId = '300000000000000001';
    discord.addGuild(guildId, ['1'], []);
    const benefitId = await createBenefit(srv, s, { type: 'discord', description: 'Role', properties: { guild_id: guildId, role_id: '1' } });
    const productId = await productWith(srv, s, [benefitId]);
    const alice = await buy(srv, s, productId);
    const bob = await buy(srv, s, productId);
    const aliceGrant = await grantOf(srv, s, benefitId, alice.customerId, () => true);
    await expect(
      bob.polar.customerPortal.benefitGrants.update(bob.security, {
        id: aliceGrant.id,
        customerBenefitGrantUpdate: { benefitType: 'discord', properties: { accountId: '123' } },
      }),
    ).rejects.toBeInstanceOf(ResourceNotFound);
    const raw = await call(srv.url, bob.token, 'PATCH', `/v1/customer-portal/benefit-grants/${aliceGrant.id}`, { benefit_type: 'discord', properties: { account_id: '123' } });
    expect(raw.status).toBe(404);
    expect(raw.body).toMatchObject({ error: 'ResourceNotFound' });
  });
});
