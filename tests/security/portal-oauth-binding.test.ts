/**
 * The portal's account-connection flow (GitHub through the local GitHub server's real OAuth endpoints)
 * is bound to the browser that started it: the authorize answer sets a random HttpOnly, SameSite=Lax
 * cookie for the callback path whose hash the signed state carries. The callback refuses a state
 * arriving without that cookie or with another browser's, and connects nothing then; the browser that
 * started the flow connects its account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { startFakeGitHub, type FakeGitHub } from '../fakes/github-server.ts';
import { buy, call, createBenefit, grantSeller, productWith, type Seller } from '../grants/helpers.ts';

let srv: TestServer;
let github: FakeGitHub;
let s: Seller;

beforeAll(async () => {
  github = await startFakeGitHub();
  srv = await startTestServer({
    env: {
      GITHUB_API_URL: github.url,
      GITHUB_TOKEN: github.token,
      GITHUB_OAUTH_URL: github.url,
      GITHUB_BENEFITS_CLIENT_ID: github.oauth.clientId,
      GITHUB_BENEFITS_CLIENT_SECRET: github.oauth.clientSecret,
    },
  });
  Object.assign(srv.deps.cfg, { PUBLIC_URL: srv.url });
  s = await grantSeller(srv);
  github.addRepository('acme', 'bound');
}, 120_000);
afterAll(async () => {
  await srv?.close();
  await github?.close();
});

const CALLBACK_PATH = '/v1/customer-portal/oauth-accounts/callback';

/** A customer starts connecting GitHub: the authorize answer's URL and Set-Cookie. */
async function start(token: string) {
  const returnTo = `${srv.url}/portal/${s.organization.slug}/benefits`;
  const res = await call(srv.url, token, 'GET', `/v1/customer-portal/oauth-accounts/authorize?platform=github&return_to=${encodeURIComponent(returnTo)}`);
  expect(res.status).toBe(200);
  return { url: new URL(res.body.url), setCookie: res.headers.getSetCookie(), returnTo };
}

/** The provider's part: `user` signs in and approves; answers the callback URL GitHub redirects to. */
async function approve(authorize: URL, user: string): Promise<string> {
  const approved = await fetch(authorize, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...Object.fromEntries(authorize.searchParams), user }),
  });
  expect(approved.status).toBe(302);
  return approved.headers.get('location')!;
}

const cookiePair = (setCookie: string[]) => setCookie.map((c) => c.split(';')[0]).join('; ');
const connected = async (token: string) => (await call(srv.url, token, 'GET', '/v1/customer-portal/customers/me')).body.oauth_accounts;

describe('portal account connection bound to the browser', () => {
  it('sets a random HttpOnly SameSite=Lax cookie for the callback only, a new one each time', async () => {
    const benefitId = await createBenefit(srv, s, { type: 'custom', description: 'Note', properties: { note: 'Hi' } });
    const buyer = await buy(srv, s, await productWith(srv, s, [benefitId]));
    const a = await start(buyer.token);
    const b = await start(buyer.token);
    expect(a.setCookie).toHaveLength(1);
    const attrs = a.setCookie[0]!.split(';').map((x) => x.trim());
    const [name, value] = attrs[0]!.split('=');
    expect(name).toBe('emporia_oauth_connect_github');
    // At least 128 random bits: 32 bytes in base64url.
    expect(value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(attrs.slice(1).sort()).toEqual(['HttpOnly', 'Max-Age=600', `Path=${CALLBACK_PATH}`, 'SameSite=Lax'].sort());
    expect(b.setCookie[0]!.split(';')[0]).not.toBe(attrs[0]);
  });

  it("refuses a state sent to another browser (no cookie, or that browser's own) and connects nothing", async () => {
    const benefitId = await createBenefit(srv, s, {
      type: 'github_repository',
      description: 'Source access',
      properties: { repository_owner: 'acme', repository_name: 'bound', permission: 'pull' },
    });
    const product = await productWith(srv, s, [benefitId]);
    const attacker = await buy(srv, s, product);
    const victim = await buy(srv, s, product);
    github.addUser('victim-dev');
    github.addUser('attacker-dev');

    // The attacker starts a flow and hands its provider link to the victim, who approves it.
    const attackerFlow = await start(attacker.token);
    const victimOwnFlow = await start(victim.token);
    const callback = await approve(attackerFlow.url, 'victim-dev');
    const bare = await fetch(callback, { redirect: 'manual' });
    expect(bare.status).toBe(400);
    expect((await bare.json()).detail).toMatch(/another browser/);
    const otherBrowser = await fetch(callback, { redirect: 'manual', headers: { cookie: cookiePair(victimOwnFlow.setCookie) } });
    expect(otherBrowser.status).toBe(400);
    // The refusal clears the binding cookie.
    expect(otherBrowser.headers.getSetCookie().map((c) => c.split(';').map((x) => x.trim()).filter((x) => /^emporia|^Max-Age/.test(x)))).toEqual([
      ['emporia_oauth_connect_github=', 'Max-Age=0'],
    ]);
    expect(await connected(attacker.token)).toEqual({});
    expect(await connected(victim.token)).toEqual({});

    // The browser that started the flow (the victim's own) connects the victim's account.
    const own = await approve(victimOwnFlow.url, 'victim-dev');
    const back = await fetch(own, { redirect: 'manual', headers: { cookie: cookiePair(victimOwnFlow.setCookie) } });
    expect(back.status).toBe(303);
    expect(back.headers.get('location')).toBe(`${victimOwnFlow.returnTo}?connected=github`);
    expect(Object.keys(await connected(victim.token))).toEqual(['github']);
    expect(await connected(attacker.token)).toEqual({});
  });
});
