/**
 * Legacy pledges through the seller API (scopes issues:read / issues:write): a pledge on an issue of
 * the organization's repository, its states (initiated → created → pending → refunded …, refused
 * moves a 422 at body.state), the search, another organization's pledge a 404, and the
 * pledge.created / pledge.updated events, whose payloads the SDK's webhook schemas accept.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookPledgeCreatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookpledgecreatedpayload.js';
import { WebhookPledgeUpdatedPayload$inboundSchema } from '@polar-sh/sdk/models/components/webhookpledgeupdatedpayload.js';
import { Organization } from '../../api/src/modules/organizations/entities.ts';
import { ExternalOrganization, Repository } from '../../api/src/modules/repositories/entities.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { call, locs, sellerWithSdk } from '../catalogue/helpers-c.ts';
import { eventsOf } from '../subscriptions/lifecycle-helpers.ts';

let srv: TestServer;
let a: Awaited<ReturnType<typeof sellerWithSdk>>;
let b: Awaited<ReturnType<typeof sellerWithSdk>>;
let repoId: string;
const SCOPES = ['issues:read', 'issues:write'];

beforeAll(async () => {
  srv = await startTestServer();
  a = await sellerWithSdk(srv, SCOPES);
  b = await sellerWithSdk(srv, SCOPES);
  const em = srv.deps.orm.em.fork();
  const login = `acme-${randomUUID().slice(0, 6)}`;
  const ext = em.create(ExternalOrganization, {
    platform: 'github',
    name: login,
    avatarUrl: `https://avatars.example.com/${login}.png`,
    isPersonal: false,
    organization: em.getReference(Organization, a.organization.id),
  });
  const repo = em.create(Repository, {
    platform: 'github',
    externalOrganization: ext,
    organization: em.getReference(Organization, a.organization.id),
    name: 'widgets',
    description: 'Widgets',
    stars: 10,
    license: 'MIT',
    homepage: null,
    isPrivate: false,
    profileSettings: {},
  });
  await em.flush();
  repoId = repo.id;
});
afterAll(async () => {
  await srv?.close();
});

const pledge = (token: string, extra: Record<string, unknown> = {}) =>
  call(srv.url, token, 'POST', '/v1/pledges/', {
    repository_id: repoId,
    issue_number: 42,
    issue_title: 'Support dark mode',
    amount: 5000,
    type: 'pay_upfront',
    pledger_name: 'Pat Pledger',
    pledger_github_username: 'patp',
    ...extra,
  });
const move = (token: string, id: string, state: string) => call(srv.url, token, 'POST', `/v1/pledges/${id}/state`, { state });

describe('legacy pledges', () => {
  it('records a pledge, moves it through its states and announces each change', async () => {
    const created = await pledge(a.token);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ amount: 5000, currency: 'usd', state: 'initiated', type: 'pay_upfront', refunded_at: null, scheduled_payout_at: null });
    expect(created.body.issue).toMatchObject({ number: 42, title: 'Support dark mode', funding: { pledges_sum: { currency: 'usd', amount: 0 } } });
    expect(created.body.issue.repository.id).toBe(repoId);
    expect(created.body.pledger).toEqual({ name: 'Pat Pledger', github_username: 'patp', avatar_url: null });
    const id = created.body.id;

    const paid = await move(a.token, id, 'created');
    expect([paid.status, paid.body.state, paid.body.issue.funding.pledges_sum.amount]).toEqual([200, 'created', 5000]);
    const second = await pledge(a.token, { type: 'pay_on_completion', amount: 2500 });
    expect([second.status, second.body.state, second.body.issue.id]).toEqual([201, 'created', created.body.issue.id]);
    expect(second.body.issue.funding.pledges_sum.amount).toBe(7500);

    const solved = await move(a.token, id, 'pending');
    expect([solved.status, solved.body.state]).toEqual([200, 'pending']);
    expect(new Date(solved.body.scheduled_payout_at).getTime() - new Date(solved.body.modified_at).getTime()).toBeGreaterThanOrEqual(14 * 86_400_000 - 1000);
    const refunded = await move(a.token, id, 'refunded');
    expect([refunded.status, refunded.body.state, refunded.body.scheduled_payout_at]).toEqual([200, 'refunded', null]);
    expect(refunded.body.refunded_at).not.toBeNull();
    const again = await move(a.token, id, 'pending');
    expect(again.status).toBe(422);
    expect(locs(again.body)).toEqual(['body.state']);
    expect((await call(srv.url, a.token, 'GET', `/v1/pledges/${id}`)).body.state).toBe('refunded');

    const events = (await eventsOf({ deps: srv.deps } as never, a.organization.id)).filter((e) => e.type.startsWith('pledge.'));
    expect(events.map((e) => [e.type, e.data.id, e.data.state])).toEqual([
      ['pledge.created', id, 'initiated'],
      ['pledge.updated', id, 'created'],
      ['pledge.created', second.body.id, 'created'],
      ['pledge.updated', id, 'pending'],
      ['pledge.updated', id, 'refunded'],
    ]);
    // The SDK's webhook schemas parse what the endpoints would receive.
    const parsed = events.map((e) =>
      (e.type === 'pledge.created' ? WebhookPledgeCreatedPayload$inboundSchema : WebhookPledgeUpdatedPayload$inboundSchema).parse({ type: e.type, data: e.data }),
    );
    expect(parsed.map((p) => [p.data.id, p.data.state, p.data.issue.number])).toEqual(events.map((e) => [e.data.id, e.data.state, 42]));
  });

  it('refuses a pledge below the minimum or on a repository of another organization', async () => {
    const small = await pledge(a.token, { amount: 1999 });
    expect(small.status).toBe(422);
    expect(locs(small.body)).toEqual(['body.amount']);
    const foreign = await pledge(b.token);
    expect(foreign.status).toBe(422);
    expect(locs(foreign.body)).toEqual(['body.repository_id']);
  });

  it("searches the organization's pledges by state and type; another organization's pledge is a 404", async () => {
    const p = (await pledge(a.token, { type: 'pay_directly', issue_number: 7 })).body;
    const found = await call(srv.url, a.token, 'GET', `/v1/pledges/search?issue_number=7&type=pay_directly&state=created`);
    expect(found.status).toBe(200);
    expect(found.body.items.map((x: { id: string }) => x.id)).toEqual([p.id]);
    expect(found.body.pagination.total_count).toBe(1);
    expect((await call(srv.url, b.token, 'GET', `/v1/pledges/${p.id}`)).status).toBe(404);
    expect((await move(b.token, p.id, 'cancelled')).status).toBe(404);
    const none = await call(srv.url, b.token, 'GET', `/v1/pledges/search`);
    expect([none.status, none.body.items]).toEqual([200, []]);
  });
});
