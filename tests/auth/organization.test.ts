/**
 * The organization plugin (with teams) through the Better Auth client: organizations, the active
 * organization, members and roles, invitations (mailed, 48 h, recipient only) and teams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session, User } from '../../api/src/auth/entities.ts';
import { Invitation, Member } from '../../api/src/modules/organizations/entities.ts';
import { startTestServer, uniqueEmail, uniqueSlug, type TestServer } from '../harness.ts';
import { listMembers, listTeams, signedUpUser, waitForMailMatching, type AuthClient } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
});
afterAll(async () => {
  await srv?.close();
});

const em = () => srv.deps.orm.em.fork();

async function verified(opts: { email?: string } = {}) {
  const u = await signedUpUser(srv.url, opts);
  await em().nativeUpdate(User, { id: u.user.id }, { emailVerified: true });
  // Drop the cached session so the next reads see the verified flag.
  u.jar.cookies.delete('better-auth.session_data');
  return u;
}

async function newOrg(c: AuthClient, extra: Record<string, unknown> = {}) {
  const res = await c.client.organization.create({ name: 'Acme Inc', slug: uniqueSlug('acme'), ...extra });
  if (res.error) throw new Error(`create failed: ${res.error.status} ${res.error.message}`);
  return res.data!;
}

/** Invites `email` into the org as `role` and has that user accept through the client. */
async function join(owner: AuthClient, orgId: string, role: 'admin' | 'member' | 'owner') {
  const u = await verified();
  const inv = await owner.client.organization.inviteMember({ email: u.email, role, organizationId: orgId });
  if (inv.error) throw new Error(`invite failed: ${inv.error.message}`);
  const acc = await u.client.organization.acceptInvitation({ invitationId: inv.data!.id });
  if (acc.error) throw new Error(`accept failed: ${acc.error.message}`);
  return { ...u, memberId: acc.data!.member.id as string };
}

describe('organizations', () => {
  it('creates an organization (caller owner, default team, active), lists, reads and updates it', async () => {
    const a = await signedUpUser(srv.url);
    const slug = uniqueSlug('acme');
    const created = await a.client.organization.create({ name: 'Acme Inc', slug, logo: 'https://img.example/l.png', metadata: { plan: 'pro' } });
    expect(created.error).toBeNull();
    const org = created.data!;
    expect(org).toMatchObject({ name: 'Acme Inc', slug, logo: 'https://img.example/l.png', metadata: { plan: 'pro' } });
    expect(org.members).toHaveLength(1);
    expect(org.members[0]).toMatchObject({ userId: a.user.id, role: 'owner', organizationId: org.id });
    expect(org.members[0]!.teamId).toEqual(expect.any(String));

    const session = await a.client.getSession();
    expect(session.data!.session.activeOrganizationId).toBe(org.id);

    const list = await a.client.organization.list();
    expect(list.data!.map((o) => o.id)).toContain(org.id);
    // Reads carry the metadata as Better Auth stores it: JSON text.
    expect(list.data!.find((o) => o.id === org.id)!.metadata).toBe('{"plan":"pro"}');

    const full = await a.client.organization.getFullOrganization({ query: { organizationId: org.id } });
    expect(full.data).toMatchObject({ id: org.id, slug, invitations: [] });
    expect(full.data!.members[0]).toMatchObject({ role: 'owner', user: { id: a.user.id, email: a.email } });
    expect(full.data!.teams).toEqual([expect.objectContaining({ name: 'Acme Inc', organizationId: org.id })]);
    // Without an id: the active organization.
    expect((await a.client.organization.getFullOrganization()).data!.id).toBe(org.id);

    const taken = await a.client.organization.checkSlug({ slug });
    expect(taken.error).toMatchObject({ status: 400, message: 'slug is taken' });
    expect((await a.client.organization.checkSlug({ slug: uniqueSlug('free') })).data).toEqual({ status: true });
    const dup = await a.client.organization.create({ name: 'Again', slug });
    expect(dup.error).toMatchObject({ status: 400, code: 'ORGANIZATION_ALREADY_EXISTS', message: 'Organization already exists' });

    const upd = await a.client.organization.update({ data: { name: 'Acme Corp', metadata: { plan: 'team' } }, organizationId: org.id });
    expect(upd.data).toMatchObject({ id: org.id, name: 'Acme Corp', metadata: { plan: 'team' } });

    // The same row is the seller organization of /v1, which the session cookie authorizes.
    const v1 = await a.raw(`/v1/organizations/${org.id}`);
    expect(v1.status).toBe(200);
    expect(await v1.json()).toMatchObject({ id: org.id, name: 'Acme Corp', slug, avatar_url: 'https://img.example/l.png' });
  });

  it('keeps the current active organization when asked, switches and clears it', async () => {
    const a = await signedUpUser(srv.url);
    const first = await newOrg(a);
    const second = await newOrg(a, { keepCurrentActiveOrganization: true });
    expect((await a.client.getSession()).data!.session.activeOrganizationId).toBe(first.id);

    const switched = await a.client.organization.setActive({ organizationId: second.id });
    expect(switched.data).toMatchObject({ id: second.id, members: [expect.objectContaining({ userId: a.user.id })] });
    expect((await a.client.getSession()).data!.session.activeOrganizationId).toBe(second.id);
    expect((await a.client.organization.getActiveMember()).data).toMatchObject({ role: 'owner', organizationId: second.id });

    const cleared = await a.client.organization.setActive({ organizationId: null });
    expect(cleared.data).toBeNull();
    expect((await a.client.getSession()).data!.session.activeOrganizationId).toBeNull();
    expect((await a.client.organization.getActiveMember()).error).toMatchObject({ status: 400, message: 'No active organization' });
    expect((await a.client.organization.getFullOrganization()).data).toBeNull();

    const stranger = await signedUpUser(srv.url);
    const denied = await stranger.client.organization.setActive({ organizationId: first.id });
    expect(denied.error).toMatchObject({ status: 403, message: 'User is not a member of the organization' });
    const peek = await stranger.client.organization.getFullOrganization({ query: { organizationId: first.id } });
    expect(peek.error).toMatchObject({ status: 403, message: 'User is not a member of the organization' });
  });

  it('deletes an organization (owner only) and clears it where it was active', async () => {
    const a = await signedUpUser(srv.url);
    const org = await newOrg(a);
    const admin = await join(a, org.id, 'admin');
    const denied = await admin.client.organization.delete({ organizationId: org.id });
    expect(denied.error).toMatchObject({ status: 403, message: 'You are not allowed to delete this organization' });
    const res = await a.client.organization.delete({ organizationId: org.id });
    expect(res.data).toMatchObject({ id: org.id });
    expect((await a.client.getSession()).data!.session.activeOrganizationId).toBeNull();
    expect((await admin.client.getSession({ query: { disableCookieCache: true } })).data!.session.activeOrganizationId).toBeNull();
    expect((await a.client.organization.list()).data!.map((o) => o.id)).not.toContain(org.id);
    const gone = await a.client.organization.delete({ organizationId: org.id });
    expect(gone.error).toMatchObject({ status: 400, message: 'User is not a member of the organization' });
  });
});

describe('invitations', () => {
  it('invites by mail; the recipient reads, accepts and becomes active in the organization', async () => {
    const owner = await signedUpUser(srv.url, { name: 'Olivia Owner' });
    const org = await newOrg(owner);
    const invitee = await verified({ email: uniqueEmail('invitee') });

    const before = Date.now();
    const inv = await owner.client.organization.inviteMember({ email: invitee.email.toUpperCase(), role: 'admin' });
    const after = Date.now();
    expect(inv.error).toBeNull();
    expect(inv.data).toMatchObject({ email: invitee.email, role: 'admin', status: 'pending', organizationId: org.id, inviterId: owner.user.id });
    // Expires 48 hours after it was made (during the call).
    const expiresAt = new Date(inv.data!.expiresAt).getTime();
    expect(expiresAt).toBeGreaterThanOrEqual(before + 48 * 3600 * 1000);
    expect(expiresAt).toBeLessThanOrEqual(after + 48 * 3600 * 1000);

    const mail = await waitForMailMatching(invitee.email, /invited you to Acme Inc/);
    expect(mail.text).toContain('Olivia Owner');
    expect(mail.text).toContain(inv.data!.id);
    expect(mail.html).toContain('View invitation');
    const invitationId = /invitation \(id ([0-9a-f-]{36})\)/.exec(mail.text)![1]!;

    const again = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member' });
    expect(again.error).toMatchObject({ status: 400, message: 'User is already invited to this organization' });
    const resent = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', resend: true });
    expect(resent.data).toMatchObject({ id: invitationId, role: 'member' });
    await waitForMailMatching(invitee.email, /invited you to Acme Inc/, 2);

    const seen = await invitee.client.organization.getInvitation({ query: { id: invitationId } });
    expect(seen.data).toMatchObject({
      id: invitationId,
      organizationName: 'Acme Inc',
      organizationSlug: org.slug,
      inviterEmail: owner.email,
      status: 'pending',
    });

    const accepted = await invitee.client.organization.acceptInvitation({ invitationId });
    expect(accepted.error).toBeNull();
    expect(accepted.data!.invitation).toMatchObject({ id: invitationId, status: 'accepted' });
    expect(accepted.data!.member).toMatchObject({ userId: invitee.user.id, organizationId: org.id, role: 'member' });
    expect((await invitee.client.getSession()).data!.session.activeOrganizationId).toBe(org.id);

    const twice = await invitee.client.organization.acceptInvitation({ invitationId });
    expect(twice.error).toMatchObject({ status: 400, message: 'Invitation not found' });
    const member = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member' });
    expect(member.error).toMatchObject({ status: 400, message: 'User is already a member of this organization' });

    const list = await owner.client.organization.listInvitations({ query: { organizationId: org.id } });
    expect(list.data).toEqual([expect.objectContaining({ id: invitationId, status: 'accepted' })]);
  });

  it('lets only the recipient, with a verified address, accept or reject', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const invitedEmail = uniqueEmail('target');
    const inv = await owner.client.organization.inviteMember({ email: invitedEmail, role: 'member', organizationId: org.id });
    const invitationId = inv.data!.id;

    const stranger = await verified();
    const steal = await stranger.client.organization.acceptInvitation({ invitationId });
    expect(steal.error).toMatchObject({ status: 403, message: 'You are not the recipient of the invitation' });
    const peek = await stranger.client.organization.getInvitation({ query: { id: invitationId } });
    expect(peek.error).toMatchObject({ status: 403, message: 'You are not the recipient of the invitation' });
    const reject = await stranger.client.organization.rejectInvitation({ invitationId });
    expect(reject.error).toMatchObject({ status: 403 });

    // Signing up with the invited address is not enough: the address must be verified.
    const squatter = await signedUpUser(srv.url, { email: invitedEmail });
    const unverified = await squatter.client.organization.acceptInvitation({ invitationId });
    expect(unverified.error).toMatchObject({
      status: 403,
      message: 'Email verification required before accepting or rejecting invitation',
    });
    expect(await em().count(Member, { organization: org.id })).toBe(1);

    await em().nativeUpdate(User, { id: squatter.user.id }, { emailVerified: true });
    const rejected = await squatter.client.organization.rejectInvitation({ invitationId });
    expect(rejected.data).toMatchObject({ invitation: { id: invitationId, status: 'rejected' }, member: null });
    const late = await squatter.client.organization.acceptInvitation({ invitationId });
    expect(late.error).toMatchObject({ status: 400, message: 'Invitation not found' });
  });

  it('expires invitations after 48 hours: no longer pending, so they can be sent again', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const invitee = await verified();
    const inv = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', organizationId: org.id });
    await em().nativeUpdate(Invitation, { id: inv.data!.id }, { expiresAt: new Date(Date.now() - 1000) });
    const expired = await invitee.client.organization.acceptInvitation({ invitationId: inv.data!.id });
    expect(expired.error).toMatchObject({ status: 400, message: 'Invitation not found' });
    const fresh = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', organizationId: org.id });
    expect(fresh.error).toBeNull();
    expect(fresh.data!.id).not.toBe(inv.data!.id);
  });

  it('cancels invitations (owner/admin), and keeps members from inviting or cancelling', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const plain = await join(owner, org.id, 'member');
    const inv = await owner.client.organization.inviteMember({ email: uniqueEmail('c'), role: 'member', organizationId: org.id });

    const invite = await plain.client.organization.inviteMember({ email: uniqueEmail(), role: 'member', organizationId: org.id });
    expect(invite.error).toMatchObject({ status: 403, message: 'You are not allowed to invite users to this organization' });
    const cancel = await plain.client.organization.cancelInvitation({ invitationId: inv.data!.id });
    expect(cancel.error).toMatchObject({ status: 403, message: 'You are not allowed to cancel this invitation' });
    const list = await plain.client.organization.listInvitations({ query: { organizationId: org.id } });
    // Members may list invitations: the plain member's own (accepted) and the pending one.
    expect(list.data!.map((i) => i.status).sort()).toEqual(['accepted', 'pending']);

    const ok = await owner.client.organization.cancelInvitation({ invitationId: inv.data!.id });
    expect(ok.data).toMatchObject({ id: inv.data!.id, status: 'canceled' });

    const outsider = await signedUpUser(srv.url);
    const outsiderList = await outsider.client.organization.listInvitations({ query: { organizationId: org.id } });
    expect(outsiderList.error).toMatchObject({ status: 403 });
  });

  it('lets only owners invite owners, and refuses unknown roles', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const admin = await join(owner, org.id, 'admin');
    const res = await admin.client.organization.inviteMember({ email: uniqueEmail(), role: 'owner', organizationId: org.id });
    expect(res.error).toMatchObject({ status: 403, message: 'you are not allowed to invite user with this role' });
    const unknown = await owner.client.organization.inviteMember({ email: uniqueEmail(), role: 'superuser' as 'member', organizationId: org.id });
    expect(unknown.error).toMatchObject({ status: 400, message: 'Role not found' });
    const multi = await owner.client.organization.inviteMember({ email: uniqueEmail(), role: ['admin', 'member'], organizationId: org.id });
    expect(multi.data).toMatchObject({ role: 'admin,member' });
  });
});

describe('members and roles', () => {
  it('lists members, updates roles and removes members as the permission table says', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const admin = await join(owner, org.id, 'admin');
    const plain = await join(owner, org.id, 'member');

    const members = await listMembers(plain, { organizationId: org.id });
    expect(members.data!.total).toBe(3);
    expect(members.data!.members.map((m) => m.user.email).sort()).toEqual([owner.email, admin.email, plain.email].sort());
    const page = await listMembers(owner, { organizationId: org.id, limit: 1, offset: 1 });
    expect(page.data!.members).toHaveLength(1);

    // A member acting above their role.
    const promote = await plain.client.organization.updateMemberRole({ memberId: plain.memberId, role: 'admin', organizationId: org.id });
    expect(promote.error).toMatchObject({ status: 403, message: 'You are not allowed to update this member' });
    const kick = await plain.client.organization.removeMember({ memberIdOrEmail: admin.email, organizationId: org.id });
    expect(kick.error).toMatchObject({ status: 403, message: 'You are not allowed to delete this member' });
    const upd = await plain.client.organization.update({ data: { name: 'Hijacked' }, organizationId: org.id });
    expect(upd.error).toMatchObject({ status: 403, message: 'You are not allowed to update this organization' });
    const team = await plain.client.organization.createTeam({ name: 'Mine', organizationId: org.id });
    expect(team.error).toMatchObject({ status: 403, message: 'You are not allowed to create teams in this organization' });

    // Admins manage members but cannot make or touch owners.
    const ownerMemberId = members.data!.members.find((m) => m.userId === owner.user.id)!.id;
    const toOwner = await admin.client.organization.updateMemberRole({ memberId: plain.memberId, role: 'owner', organizationId: org.id });
    expect(toOwner.error).toMatchObject({ status: 403 });
    const demoteOwner = await admin.client.organization.updateMemberRole({ memberId: ownerMemberId, role: 'member', organizationId: org.id });
    expect(demoteOwner.error).toMatchObject({ status: 403 });
    const removeOwner = await admin.client.organization.removeMember({ memberIdOrEmail: ownerMemberId, organizationId: org.id });
    expect(removeOwner.error).toMatchObject({ status: 403 });
    const ok = await admin.client.organization.updateMemberRole({ memberId: plain.memberId, role: ['member', 'admin'], organizationId: org.id });
    expect(ok.data).toMatchObject({ id: plain.memberId, role: 'member,admin' });
    // Comma-separated roles: any granting role allows.
    expect((await plain.client.organization.update({ data: { name: 'Renamed by admin' }, organizationId: org.id })).error).toBeNull();

    const removed = await admin.client.organization.removeMember({ memberIdOrEmail: plain.email, organizationId: org.id });
    expect(removed.data!.member).toMatchObject({ id: plain.memberId, userId: plain.user.id });
    expect((await plain.client.getSession({ query: { disableCookieCache: true } })).data!.session.activeOrganizationId).toBeNull();
    const missing = await admin.client.organization.removeMember({ memberIdOrEmail: plain.memberId, organizationId: org.id });
    expect(missing.error).toMatchObject({ status: 400, message: 'Member not found' });

    // The only owner can neither leave, be removed nor be demoted.
    const leave = await owner.client.organization.leave({ organizationId: org.id });
    expect(leave.error).toMatchObject({ status: 400, message: 'You cannot leave the organization as the only owner' });
    const self = await owner.client.organization.updateMemberRole({ memberId: ownerMemberId, role: 'admin', organizationId: org.id });
    expect(self.error).toMatchObject({ status: 400, message: 'You cannot leave the organization as the only owner' });

    const adminLeaves = await admin.client.organization.leave({ organizationId: org.id });
    expect(adminLeaves.data).toMatchObject({ userId: admin.user.id });
    expect((await admin.client.getSession({ query: { disableCookieCache: true } })).data!.session.activeOrganizationId).toBeNull();
  });

  it('does not act on a member of another organization', async () => {
    const a = await signedUpUser(srv.url);
    const orgA = await newOrg(a);
    const b = await signedUpUser(srv.url);
    const orgB = await newOrg(b);
    const victim = orgB.members[0]!.id;
    const res = await a.client.organization.updateMemberRole({ memberId: victim, role: 'member', organizationId: orgA.id });
    expect(res.error).toMatchObject({ status: 400, message: 'Member not found' });
    const rm = await a.client.organization.removeMember({ memberIdOrEmail: victim, organizationId: orgA.id });
    expect(rm.error).toMatchObject({ status: 400, message: 'Member not found' });
    const other = await listMembers(a, { organizationId: orgB.id });
    expect(other.error).toMatchObject({ status: 403 });
  });

  it('enforces the membership limit of 100', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const invitee = await verified();
    const inv = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', organizationId: org.id });
    // Fill the organization up to the limit directly.
    const fork = em();
    const conn = fork.getConnection();
    await conn.execute(
      `insert into users (id, created_at, email, email_verified, name)
       select gen_random_uuid(), now(), 'filler-' || g || '-' || ? || '@example.com', true, 'F' from generate_series(1, 99) g`,
      [org.id],
    );
    await conn.execute(
      `insert into members (id, created_at, organization_id, user_id, role)
       select gen_random_uuid(), now(), ?, id, 'member' from users where email like ?`,
      [org.id, `filler-%-${org.id}@example.com`],
    );
    expect(await fork.count(Member, { organization: org.id })).toBe(100);
    const res = await invitee.client.organization.acceptInvitation({ invitationId: inv.data!.id });
    expect(res.error).toMatchObject({ status: 403, message: 'Organization membership limit reached' });
    const listed = await listMembers(owner, { organizationId: org.id, limit: 500 });
    expect(listed.data!.members).toHaveLength(100);
    expect(listed.data!.total).toBe(100);
  });
});

describe('teams', () => {
  it('creates, lists, updates and removes teams; the last team stays', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const created = await owner.client.organization.createTeam({ name: 'Support' });
    expect(created.data).toMatchObject({ name: 'Support', organizationId: org.id });
    const empty = await owner.client.organization.createTeam({ name: '' });
    expect(empty.error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });

    const list = await listTeams(owner, { organizationId: org.id });
    expect(list.data!.map((t) => t.name).sort()).toEqual(['Acme Inc', 'Support']);

    const upd = await owner.client.organization.updateTeam({ teamId: created.data!.id, data: { name: 'Customer Support' } });
    expect(upd.data).toMatchObject({ id: created.data!.id, name: 'Customer Support' });

    const plain = await join(owner, org.id, 'member');
    expect((await listTeams(plain, { organizationId: org.id })).data).toHaveLength(2);
    const denied = await plain.client.organization.updateTeam({ teamId: created.data!.id, data: { name: 'x' } });
    expect(denied.error).toMatchObject({ status: 403, message: 'You are not allowed to update this team' });
    const denyRemove = await plain.client.organization.removeTeam({ teamId: created.data!.id, organizationId: org.id });
    expect(denyRemove.error).toMatchObject({ status: 403, message: 'You are not allowed to delete teams in this organization' });

    // An invitation into a team puts the new member in it.
    const invitee = await verified();
    const inv = await owner.client.organization.inviteMember({ email: invitee.email, role: 'member', teamId: created.data!.id, organizationId: org.id });
    expect(inv.data).toMatchObject({ teamId: created.data!.id });
    const acc = await invitee.client.organization.acceptInvitation({ invitationId: inv.data!.id });
    expect(acc.data!.member).toMatchObject({ teamId: created.data!.id });
    const badTeam = await owner.client.organization.inviteMember({ email: uniqueEmail(), role: 'member', teamId: '00000000-0000-4000-8000-000000000000', organizationId: org.id });
    expect(badTeam.error).toMatchObject({ status: 400, message: 'Team not found' });

    const removed = await owner.client.organization.removeTeam({ teamId: created.data!.id, organizationId: org.id });
    expect(removed.data).toEqual({ message: 'Team removed successfully.' });
    const last = list.data!.find((t) => t.name === 'Acme Inc')!;
    const lastTeam = await owner.client.organization.removeTeam({ teamId: last.id, organizationId: org.id });
    expect(lastTeam.error).toMatchObject({ status: 400, message: 'Unable to remove last team' });
    const gone = await owner.client.organization.removeTeam({ teamId: created.data!.id, organizationId: org.id });
    expect(gone.error).toMatchObject({ status: 400, message: 'Team not found' });
  });
});

describe('session and membership state', () => {
  it('clears the active organization of sessions when their user is removed', async () => {
    const owner = await signedUpUser(srv.url);
    const org = await newOrg(owner);
    const m = await join(owner, org.id, 'member');
    const active = await m.client.organization.setActive({ organizationId: org.id });
    expect(active.error).toBeNull();
    const before = await em().find(Session, { user: m.user.id });
    expect(before.length).toBeGreaterThan(0);
    expect(before.map((s) => s.activeOrganizationId)).toContain(org.id);

    const removed = await owner.client.organization.removeMember({ memberIdOrEmail: m.memberId, organizationId: org.id });
    expect(removed.error).toBeNull();
    expect(removed.data!.member).toMatchObject({ id: m.memberId, userId: m.user.id });
    const sessions = await em().find(Session, { user: m.user.id });
    expect(sessions.map((s) => s.id).sort()).toEqual(before.map((s) => s.id).sort());
    expect(sessions.map((s) => s.activeOrganizationId)).toEqual(sessions.map(() => null));
    // The removed user's own session reads no active organization either.
    m.jar.cookies.delete('better-auth.session_data');
    expect((await m.client.getSession()).data!.session.activeOrganizationId ?? null).toBeNull();
  });
});
