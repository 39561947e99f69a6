/**
 * Customers connect the GitHub or Discord account a benefit grant needs through the platforms' OAuth
 * apps (local servers speaking GitHub's and Discord's OAuth and REST protocols, tests/fakes/): the
 * portal's authorize URL, the provider's sign-in form, the callback exchanging the code, the account
 * stored on the customer, and the pending grant granted with it (collaborator invitation, guild role).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeDiscord, type FakeDiscord } from '../fakes/discord-server.ts';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github-server.ts';
import { buy, call, createBenefit, grantSeller, productWith, until, type Seller } from '../grants/helpers.ts';

let srv: TestServer;
let github: FakeGitHub;
let discord: FakeDiscord;
let s: Seller;

beforeAll(async () => {
  [github, discord] = await Promise.all([startFakeGitHub(), startFakeDiscord()]);
  srv = await startTestServer({
    env: {
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: github.token,
      GITHUB_OAUTH_URL: github.url,
      GITHUB_BENEFITS_CLIENT_ID: github.oauth.clientId,
      GITHUB_BENEFITS_CLIENT_SECRET: github.oauth.clientSecret,
      DISCORD_API_URL: discord.url,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_OAUTH_URL: discord.oauthUrl,
      DISCORD_BENEFITS_CLIENT_ID: discord.oauth.clientId,
      DISCORD_BENEFITS_CLIENT_SECRET: discord.oauth.clientSecret,
    },
  });
  // The callback URL registered with the providers is on this server.
  Object.assign(srv.deps.cfg, { PUBLIC_URL: srv.url });
  s = await grantSeller(srv);
}, 120_000);
afterAll(async () => {
  await srv?.close();
  await github?.close();
  await discord?.close();
});

/** The browser's part: open the authorize URL, sign in and approve at the provider, follow its redirect to our callback. */
async function connect(token: string, platform: 'github' | 'discord', user: string) {
  const returnTo = `${srv.url}/portal/${s.organization.slug}/benefits`;
  const start = await call(srv.url, token, 'GET', `/v1/customer-portal/oauth-accounts/authorize?platform=${platform}&return_to=${encodeURIComponent(returnTo)}`);
  expect(start.status).toBe(200);
  const authorize = new URL(start.body.url);
  expect(authorize.searchParams.get('redirect_uri')).toBe(`${srv.url}/v1/customer-portal/oauth-accounts/callback`);
  const page = await fetch(authorize);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('Authorize');
  const approved = await fetch(authorize, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...Object.fromEntries(authorize.searchParams), user }),
  });
  expect(approved.status).toBe(302);
  const callback = approved.headers.get('location')!;
  expect(callback.startsWith(`${srv.url}/v1/customer-portal/oauth-accounts/callback?`)).toBe(true);
  // The browser that started the flow sends back the binding cookie the authorize answer set.
  const cookie = start.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const back = await fetch(callback, { redirect: 'manual', headers: { cookie } });
  return { status: back.status, location: back.headers.get('location'), callback, returnTo, cookie };
}

const grantOf = async (token: string) => (await call(srv.url, token, 'GET', '/v1/customer-portal/benefit-grants/')).body.items[0];

describe('connecting accounts for benefit grants', () => {
  it('connects a GitHub account; the pending repository grant invites it', async () => {
    github.addRepository('acme', 'engine');
    const octo = github.addUser('octo-buyer');
    const benefitId = await createBenefit(srv, s, {
      type: 'github_repository',
      description: 'Source access',
      properties: { repository_owner: 'acme', repository_name: 'engine', permission: 'pull' },
    });
    const buyer = await buy(srv, s, await productWith(srv, s, [benefitId]));
    const pending = await until(async () => {
      const g = await grantOf(buyer.token);
      return g && !g.is_granted ? g : null;
    });
    expect(pending.properties.account_id ?? null).toBeNull();

    const r = await connect(buyer.token, 'github', 'octo-buyer');
    expect(r.status).toBe(303);
    expect(r.location).toBe(`${r.returnTo}?connected=github`);
    const me = await call(srv.url, buyer.token, 'GET', '/v1/customer-portal/customers/me');
    expect(me.body.oauth_accounts).toEqual({ github: { account_id: String(octo.id), account_username: 'octo-buyer' } });
    const granted = await until(async () => {
      const g = await grantOf(buyer.token);
      return g?.is_granted ? g : null;
    });
    expect(granted.properties.account_id).toBe(String(octo.id));
    expect(github.invitations('acme', 'engine').map((i) => [i.login, i.permission])).toEqual([['octo-buyer', 'pull']]);

    // The code was single-use: the same callback again sends the browser back with an error, nothing changes.
    const replay = await fetch(r.callback, { redirect: 'manual', headers: { cookie: r.cookie } });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toBe(`${r.returnTo}?oauth_error=bad_verification_code`);
  });

  it('connects a Discord account; the pending role grant adds the role', async () => {
    discord.addUser('80351110224678912', 'nelly');
    discord.addGuild('112233445566778899', ['998877665544332211'], ['80351110224678912']);
    const benefitId = await createBenefit(srv, s, {
      type: 'discord',
      description: 'Members role',
      properties: { guild_id: '112233445566778899', role_id: '998877665544332211', guild_token: 'bot-install-token' },
    });
    const buyer = await buy(srv, s, await productWith(srv, s, [benefitId]));
    await until(async () => {
      const g = await grantOf(buyer.token);
      return g && !g.is_granted ? g : null;
    });
    const r = await connect(buyer.token, 'discord', 'nelly');
    expect(r.location).toBe(`${r.returnTo}?connected=discord`);
    await until(async () => (await grantOf(buyer.token))?.is_granted);
    expect(discord.roles('112233445566778899', '80351110224678912')).toEqual(['998877665544332211']);
    const me = await call(srv.url, buyer.token, 'GET', '/v1/customer-portal/customers/me');
    expect(me.body.oauth_accounts.discord).toEqual({ account_id: '80351110224678912', account_username: 'nelly' });

    expect((await call(srv.url, buyer.token, 'DELETE', '/v1/customer-portal/oauth-accounts/discord')).status).toBe(204);
    expect((await call(srv.url, buyer.token, 'GET', '/v1/customer-portal/customers/me')).body.oauth_accounts).toEqual({});
    expect((await call(srv.url, buyer.token, 'DELETE', '/v1/customer-portal/oauth-accounts/discord')).status).toBe(404);
  });

  it('refuses a return_to outside the portal and a forged state', async () => {
    const benefitId = await createBenefit(srv, s, { type: 'custom', description: 'Note', properties: { note: 'Hi' } });
    const buyer = await buy(srv, s, await productWith(srv, s, [benefitId]));
    const foreign = await call(srv.url, buyer.token, 'GET', `/v1/customer-portal/oauth-accounts/authorize?platform=github&return_to=${encodeURIComponent('https://evil.example/portal/x')}`);
    expect(foreign.status).toBe(422);
    expect(foreign.body.detail.map((d: any) => d.loc.join('.'))).toEqual(['query.return_to']);
    const forged = await fetch(`${srv.url}/v1/customer-portal/oauth-accounts/callback?code=x&state=eyJhbGciOiJIUzI1NiJ9.e30.AAAA`, { redirect: 'manual' });
    expect(forged.status).toBe(400);
    expect((await call(srv.url, null, 'GET', `/v1/customer-portal/oauth-accounts/authorize?platform=github&return_to=${encodeURIComponent(`${srv.url}/portal/x`)}`)).status).toBe(401);
  });
});
