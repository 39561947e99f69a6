/**
 * Account routes and their mail flows, through the Better Auth client and the real mail catcher:
 * update-user, change-password, set-password, verification, password reset, change-email, delete-user.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Session, User, Verification } from '../../api/src/auth/entities.ts';
import { startTestServer, uniqueEmail, type TestServer } from '../harness.ts';
import { PASSWORD, authClient, linkIn, onServer, signedUpUser, waitForMailMatching } from './helpers.ts';

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false' } });
});
afterAll(async () => {
  await srv?.close();
});

const em = () => srv.deps.orm.em.fork();

describe('update-user and list-accounts', () => {
  it('updates name, image and username, and refuses the email', async () => {
    const a = await signedUpUser(srv.url);
    const uname = `upd_${Date.now().toString(36)}`;
    const res = await a.client.updateUser({ name: 'New Name', image: 'https://img.example/n.png', username: uname });
    expect(res.data).toEqual({ status: true });
    // The cookie cache was rewritten: the cached session shows the change at once.
    const s = await a.client.getSession();
    expect(s.data!.user).toMatchObject({ name: 'New Name', image: 'https://img.example/n.png', username: uname });
    const email = await a.raw('/api/auth/update-user', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: uniqueEmail() }),
    });
    expect(email.status).toBe(400);
    expect(await email.json()).toMatchObject({ message: 'Email can not be updated' });
  });

  it('lists the credential account', async () => {
    const a = await signedUpUser(srv.url);
    const res = await a.client.listAccounts();
    expect(res.data).toEqual([
      expect.objectContaining({ provider: 'credential', accountId: a.user.id, scopes: [] }),
    ]);
  });
});

describe('passwords', () => {
  it('changes the password, checks the current one, and can revoke the other sessions', async () => {
    const a = await signedUpUser(srv.url);
    const other = authClient(srv.url);
    await other.client.signIn.email({ email: a.email, password: PASSWORD });

    const wrong = await a.client.changePassword({ currentPassword: 'not it at all', newPassword: 'brand new password' });
    expect(wrong.error).toMatchObject({ status: 400, code: 'INVALID_PASSWORD', message: 'Invalid password' });
    const short = await a.client.changePassword({ currentPassword: PASSWORD, newPassword: 'short' });
    expect(short.error).toMatchObject({ status: 400, message: 'Password too short' });

    const ok = await a.client.changePassword({ currentPassword: PASSWORD, newPassword: 'brand new password', revokeOtherSessions: true });
    expect(ok.error).toBeNull();
    expect(ok.data!.token).toEqual(expect.any(String));
    expect(ok.data!.token).not.toBe(a.token);
    expect(ok.data!.user.id).toBe(a.user.id);
    // This client continues on the new session; the other one is signed out; the old password is gone.
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data!.session.token).toBe(ok.data!.token);
    expect((await other.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();
    const old = await authClient(srv.url).client.signIn.email({ email: a.email, password: PASSWORD });
    expect(old.error).toMatchObject({ status: 401 });
    const fresh = await authClient(srv.url).client.signIn.email({ email: a.email, password: 'brand new password' });
    expect(fresh.error).toBeNull();

    const keep = await a.client.changePassword({ currentPassword: 'brand new password', newPassword: 'third password!' });
    expect(keep.data!.token).toBeNull();
  });

  it('set-password refuses a user who has one, and needs a fresh session', async () => {
    const a = await signedUpUser(srv.url);
    const res = await a.raw('/api/auth/set-password', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ newPassword: 'another password' }),
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'USER_ALREADY_HAS_A_PASSWORD', message: 'user already has a password' });

    await em().nativeUpdate(Session, { user: a.user.id }, { updatedAt: new Date(Date.now() - 2 * 24 * 3600 * 1000) });
    const stale = await a.raw('/api/auth/set-password', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ newPassword: 'another password' }),
    });
    expect(stale.status).toBe(403);
    expect(await stale.json()).toEqual({ code: 'SESSION_IS_NOT_FRESH', message: 'Session is not fresh' });
  });

  it('resets a forgotten password through the mailed link, once', async () => {
    const a = await signedUpUser(srv.url);
    const anon = authClient(srv.url);
    const res = await anon.client.forgetPassword({ email: a.email, redirectTo: '/reset' });
    expect(res.data).toEqual({ status: true });
    // Unknown addresses get the same answer.
    expect((await anon.client.forgetPassword({ email: uniqueEmail('ghost'), redirectTo: '/reset' })).data).toEqual({ status: true });

    const mail = await waitForMailMatching(a.email, /Reset your password/);
    expect(mail.html).toContain('Choose a new password');
    const link = linkIn(mail, '/reset-password/');
    const follow = await fetch(onServer(srv.url, link), { redirect: 'manual' });
    expect(follow.status).toBe(302);
    const location = new URL(follow.headers.get('location')!);
    expect(location.pathname).toBe('/reset');
    const token = location.searchParams.get('token')!;
    expect(token).toHaveLength(24);

    const short = await anon.client.resetPassword({ newPassword: 'short', token });
    expect(short.error).toMatchObject({ status: 400, message: 'Password too short' });
    const ok = await anon.client.resetPassword({ newPassword: 'reset password ok', token });
    expect(ok.data).toEqual({ status: true });
    // Sessions from before the reset are gone.
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data).toBeNull();
    expect((await authClient(srv.url).client.signIn.email({ email: a.email, password: 'reset password ok' })).error).toBeNull();

    const reused = await anon.client.resetPassword({ newPassword: 'reset password again', token });
    expect(reused.error).toMatchObject({ status: 400, code: 'INVALID_TOKEN', message: 'invalid token' });
    const again = await fetch(onServer(srv.url, link), { redirect: 'manual' });
    expect(new URL(again.headers.get('location')!).searchParams.get('error')).toBe('INVALID_TOKEN');
  });

  it('refuses an expired reset token', async () => {
    const a = await signedUpUser(srv.url);
    await authClient(srv.url).client.forgetPassword({ email: a.email, redirectTo: '/reset' });
    const mail = await waitForMailMatching(a.email, /Reset your password/);
    const token = linkIn(mail, '/reset-password/').split('/reset-password/')[1]!.split('?')[0]!;
    await em().nativeUpdate(Verification, { identifier: { $like: 'reset-password:%' }, value: JSON.stringify({ userId: a.user.id }) }, {
      expiresAt: new Date(Date.now() - 1000),
    });
    const res = await authClient(srv.url).client.resetPassword({ newPassword: 'a fine password', token });
    expect(res.error).toMatchObject({ status: 400, message: 'invalid token' });
  });
});

describe('email verification', () => {
  it('mails a verification link on request; following it verifies the email once', async () => {
    const a = await signedUpUser(srv.url);
    expect((await a.client.sendVerificationEmail({ email: a.email })).data).toEqual({ status: true });
    const mail = await waitForMailMatching(a.email, /Verify your email/);
    expect(mail.html).toContain('Verify email');
    const link = onServer(srv.url, linkIn(mail, '/verify-email'));
    const res = await fetch(link.replace(/callbackURL=[^&]*/, 'callbackURL=%2Fwelcome'), { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(new URL(res.headers.get('location')!).pathname).toBe('/welcome');
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data!.user.emailVerified).toBe(true);

    const reused = await fetch(link.replace(/&callbackURL=[^&]*/, ''));
    expect(reused.status).toBe(401);
    expect(await reused.json()).toEqual({ code: 'INVALID_TOKEN', message: 'invalid_token' });
  });

  it('sends verification mails on request, to the own unverified address only, also when signed out', async () => {
    const a = await signedUpUser(srv.url);
    expect((await authClient(srv.url).client.sendVerificationEmail({ email: a.email })).data).toEqual({ status: true });
    await waitForMailMatching(a.email, /Verify your email/);
    const res = await a.client.sendVerificationEmail({ email: a.email, callbackURL: '/verified' });
    expect(res.data).toEqual({ status: true });
    const second = await waitForMailMatching(a.email, /Verify your email/, 2);
    const follow = await fetch(onServer(srv.url, linkIn(second, '/verify-email')), { redirect: 'manual' });
    expect(new URL(follow.headers.get('location')!).pathname).toBe('/verified');

    const verified = await a.client.sendVerificationEmail({ email: a.email });
    expect(verified.error).toMatchObject({ status: 400 });
    const anon = await authClient(srv.url).client.sendVerificationEmail({ email: uniqueEmail('ghost') });
    expect(anon.data).toEqual({ status: true });
  });

  it('redirects expired and unknown tokens with an error', async () => {
    const a = await signedUpUser(srv.url);
    await a.client.sendVerificationEmail({ email: a.email });
    const mail = await waitForMailMatching(a.email, /Verify your email/);
    await em().nativeUpdate(Verification, { value: JSON.stringify({ userId: a.user.id, email: a.email }) }, {
      expiresAt: new Date(Date.now() - 1000),
    });
    const expired = await fetch(onServer(srv.url, linkIn(mail, '/verify-email')), { redirect: 'manual' });
    expect(expired.headers.get('location')).toMatch(/\/\?error=token_expired$/);
    const unknown = await fetch(`${srv.url}/api/auth/verify-email?token=nope&callbackURL=/x`, { redirect: 'manual' });
    expect(unknown.headers.get('location')).toMatch(/\/x\?error=invalid_token$/);
  });

  it('with REQUIRE_EMAIL_VERIFICATION: sign-up does not sign in; sign-in is 403 and resends the mail', async () => {
    const strict = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false', REQUIRE_EMAIL_VERIFICATION: 'true' } });
    try {
      const email = uniqueEmail('strict');
      const { client } = authClient(strict.url);
      const up = await client.signUp.email({ email, password: PASSWORD, name: 'S' });
      expect(up.data!.token).toBeNull();
      expect((await client.getSession()).data).toBeNull();
      await waitForMailMatching(email, /Verify your email/);
      const denied = await client.signIn.email({ email, password: PASSWORD });
      expect(denied.error).toMatchObject({ status: 403, code: 'EMAIL_NOT_VERIFIED', message: 'Email not verified' });
      const resent = await waitForMailMatching(email, /Verify your email/, 2);
      await fetch(onServer(strict.url, linkIn(resent, '/verify-email')), { redirect: 'manual' });
      const ok = await client.signIn.email({ email, password: PASSWORD });
      expect(ok.error).toBeNull();
    } finally {
      await strict.close();
    }
  });
});

describe('change-email', () => {
  it('changes an unverified email directly and mails a verification to the new address', async () => {
    const a = await signedUpUser(srv.url);
    const newEmail = uniqueEmail('moved');
    const same = await a.client.changeEmail({ newEmail: a.email });
    expect(same.error).toMatchObject({ status: 400, message: 'Email is the same' });
    const taken = await a.client.changeEmail({ newEmail: (await signedUpUser(srv.url)).email });
    expect(taken.error).toMatchObject({ status: 400, code: 'COULDNT_UPDATE_YOUR_EMAIL', message: "Couldn't update your email" });

    const res = await a.client.changeEmail({ newEmail: newEmail.toUpperCase() });
    expect(res.data).toEqual({ status: true });
    expect((await a.client.getSession()).data!.user.email).toBe(newEmail);
    const mail = await waitForMailMatching(newEmail, /Verify your email/);
    await fetch(onServer(srv.url, linkIn(mail, '/verify-email')), { redirect: 'manual' });
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data!.user).toMatchObject({
      email: newEmail,
      emailVerified: true,
    });
  });

  it('for a verified user, mails a confirmation to the new address and changes on the link', async () => {
    const a = await signedUpUser(srv.url);
    await em().nativeUpdate(User, { id: a.user.id }, { emailVerified: true });
    const newEmail = uniqueEmail('confirmed');
    const res = await a.client.changeEmail({ newEmail, callbackURL: '/settings' });
    expect(res.data).toEqual({ status: true });
    expect((await a.client.getSession({ query: { disableCookieCache: true } })).data!.user.email).toBe(a.email);

    const mail = await waitForMailMatching(newEmail, /Confirm your new email/);
    expect(mail.text).toContain(a.email);
    const follow = await a.raw(onServer(srv.url, linkIn(mail, '/verify-email')), { redirect: 'manual' });
    expect(follow.status).toBe(302);
    expect(new URL(follow.headers.get('location')!).pathname).toBe('/settings');
    expect((await a.client.getSession()).data!.user).toMatchObject({ email: newEmail, emailVerified: true });
    expect((await authClient(srv.url).client.signIn.email({ email: newEmail, password: PASSWORD })).error).toBeNull();
    // The link worked once.
    const again = await fetch(onServer(srv.url, linkIn(mail, '/verify-email')), { redirect: 'manual' });
    expect(again.headers.get('location')).toMatch(/error=invalid_token/);
  });
});

describe('delete-user', () => {
  it('deletes with the password', async () => {
    const a = await signedUpUser(srv.url);
    const wrong = await a.client.deleteUser({ password: 'not the password' });
    expect(wrong.error).toMatchObject({ status: 400, message: 'Invalid password' });
    const res = await a.client.deleteUser({ password: PASSWORD });
    expect(res.data).toEqual({ success: true, message: 'User deleted' });
    expect(await em().count(User, { id: a.user.id })).toBe(0);
    expect(a.jar.get('better-auth.session_token')).toBeUndefined();
    expect((await authClient(srv.url).client.signIn.email({ email: a.email, password: PASSWORD })).error).toMatchObject({ status: 401 });
  });

  it('deletes on a fresh session without the password, refuses a stale one', async () => {
    const a = await signedUpUser(srv.url);
    await em().nativeUpdate(Session, { user: a.user.id }, { updatedAt: new Date(Date.now() - 2 * 24 * 3600 * 1000) });
    const stale = await a.client.deleteUser({});
    expect(stale.error).toMatchObject({ status: 400, message: 'Session expired. Re-authenticate to perform this action.' });
    await em().nativeUpdate(Session, { user: a.user.id }, { updatedAt: new Date() });
    expect((await a.client.deleteUser({})).data).toEqual({ success: true, message: 'User deleted' });
  });

  it('with DELETE_USER_VERIFICATION, mails a link that deletes the account of the signed-in owner only', async () => {
    const confirm = await startTestServer({ worker: false, env: { RATE_LIMIT_ENABLED: 'false', DELETE_USER_VERIFICATION: 'true' } });
    try {
      const a = await signedUpUser(confirm.url);
      const b = await signedUpUser(confirm.url);
      const res = await a.client.deleteUser({ callbackURL: '/goodbye' });
      expect(res.data).toEqual({ success: true, message: 'Verification email sent' });
      const mail = await waitForMailMatching(a.email, /Confirm the deletion/);
      const link = onServer(confirm.url, linkIn(mail, '/delete-user/callback'));
      expect(new URL(link).searchParams.get('token')).toMatch(/^[a-z0-9]{32}$/);

      // Someone else following the link deletes nothing.
      const stranger = await b.raw(link, { redirect: 'manual' });
      expect(stranger.status).toBe(404);
      const anonymous = await fetch(link, { redirect: 'manual' });
      expect(anonymous.status).toBe(404);

      const follow = await a.raw(link, { redirect: 'manual' });
      expect(follow.status).toBe(302);
      expect(new URL(follow.headers.get('location')!).pathname).toBe('/goodbye');
      expect(await confirm.deps.orm.em.fork().count(User, { id: a.user.id })).toBe(0);
      expect(await confirm.deps.orm.em.fork().count(User, { id: b.user.id })).toBe(1);
    } finally {
      await confirm.close();
    }
  });
});
