/**
 * `#/accept-invitation/:id`, the page invitation mails link to: shows the invitation (organization,
 * inviter, role) to its signed-in recipient and accepts or declines it through the auth service
 * (`/api/auth/organization/get-invitation`, `accept-invitation`, `reject-invitation`). Signed out, it
 * asks for a sign-in first; signed in as someone else, it says so and offers to switch accounts.
 * Rendered outside the layout so it works before the seller has an organization or a session.
 */
import { useCallback, useEffect, useState, type CSSProperties, type FormEvent } from 'react';
import { useParams } from 'react-admin';

interface Invitation {
  id: string;
  organizationId: string;
  organizationName: string;
  organizationSlug: string;
  inviterEmail: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
}

interface MemberView {
  id: string;
  role: string;
  user: { email: string; name: string };
}

type State =
  | { kind: 'loading' }
  | { kind: 'signed-out'; error?: string }
  | { kind: 'error'; message: string; email?: string }
  | { kind: 'ready'; invitation: Invitation; email: string; error?: string; busy?: boolean }
  | { kind: 'accepted'; invitation: Invitation; members: MemberView[] }
  | { kind: 'rejected'; invitation: Invitation };

class AuthCallError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

async function call<T>(path: string, body?: unknown): Promise<T> {
  const res = await fetch(`/api/auth${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    credentials: 'include',
    headers: { Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = (await res.json().catch(() => null)) as (T & { message?: string }) | null;
  if (!res.ok) throw new AuthCallError(res.status, data?.message || res.statusText);
  return data as T;
}

/** What a person should read for the auth service's messages on this page. */
function explain(message: string): string {
  switch (message) {
    case 'Invitation not found':
      return 'This invitation does not exist any more: it was accepted, declined, cancelled or it expired.';
    case 'You are not the recipient of the invitation':
      return 'This invitation was sent to another email address.';
    default:
      return message;
  }
}

const roles = (role: string) => role.split(',').filter(Boolean).join(', ');

const page: CSSProperties = {
  minHeight: '100vh',
  display: 'flex',
  alignItems: 'center',
  justifyContent: 'center',
  background: '#f5f6f8',
  fontFamily: 'Roboto, -apple-system, "Segoe UI", sans-serif',
};
const card: CSSProperties = {
  background: '#fff',
  border: '1px solid #e0e3e7',
  borderRadius: 8,
  padding: 32,
  width: 440,
  boxShadow: '0 1px 3px rgba(0,0,0,.08)',
};
const button: CSSProperties = {
  padding: '10px 18px',
  borderRadius: 6,
  border: 'none',
  background: '#1976d2',
  color: '#fff',
  fontSize: 15,
  cursor: 'pointer',
  marginRight: 12,
};
const secondary: CSSProperties = { ...button, background: '#fff', color: '#1976d2', border: '1px solid #1976d2' };
const input: CSSProperties = { display: 'block', width: '100%', padding: 8, margin: '4px 0 14px', fontSize: 15, boxSizing: 'border-box' };
const errorText: CSSProperties = { color: '#c62828' };

export const AcceptInvitation = () => {
  const { id = '' } = useParams<{ id: string }>();
  const [state, setState] = useState<State>({ kind: 'loading' });

  const load = useCallback(async () => {
    setState({ kind: 'loading' });
    try {
      const session = await call<{ user: { email: string } } | null>('/get-session');
      if (!session?.user) {
        setState({ kind: 'signed-out' });
        return;
      }
      try {
        const invitation = await call<Invitation>(`/organization/get-invitation?id=${encodeURIComponent(id)}`);
        setState({ kind: 'ready', invitation, email: session.user.email });
      } catch (err) {
        setState({ kind: 'error', message: explain((err as Error).message), email: session.user.email });
      }
    } catch (err) {
      setState({ kind: 'error', message: (err as Error).message });
    }
  }, [id]);

  useEffect(() => {
    void load();
  }, [load]);

  const signIn = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    try {
      await call('/sign-in/email', { email: String(form.get('email') ?? '').trim(), password: String(form.get('password') ?? '') });
      await load();
    } catch (err) {
      setState({ kind: 'signed-out', error: (err as Error).message });
    }
  };

  const signOut = async () => {
    await call('/sign-out', {}).catch(() => undefined);
    setState({ kind: 'signed-out' });
  };

  const respond = async (accept: boolean) => {
    if (state.kind !== 'ready') return;
    const { invitation } = state;
    setState({ ...state, busy: true, error: undefined });
    try {
      await call(accept ? '/organization/accept-invitation' : '/organization/reject-invitation', { invitationId: invitation.id });
      if (!accept) {
        setState({ kind: 'rejected', invitation });
        return;
      }
      const { members } = await call<{ members: MemberView[] }>(
        `/organization/list-members?organizationId=${encodeURIComponent(invitation.organizationId)}`,
      );
      setState({ kind: 'accepted', invitation, members });
    } catch (err) {
      setState({ ...state, busy: false, error: explain((err as Error).message) });
    }
  };

  return (
    <div style={page}>
      <main style={card} aria-live="polite">
        <h1 style={{ fontSize: 22, marginTop: 0 }}>Organization invitation</h1>
        {state.kind === 'loading' && <p>Loading…</p>}

        {state.kind === 'signed-out' && (
          <form onSubmit={(e) => void signIn(e)}>
            <p>Sign in with the email address the invitation was sent to, to see and accept it.</p>
            {state.error && (
              <p role="alert" style={errorText}>
                {state.error}
              </p>
            )}
            <label>
              Email
              <input style={input} name="email" type="email" autoComplete="email" required />
            </label>
            <label>
              Password
              <input style={input} name="password" type="password" autoComplete="current-password" required />
            </label>
            <button style={button} type="submit">
              Sign in
            </button>
          </form>
        )}

        {state.kind === 'error' && (
          <>
            <p role="alert" style={errorText}>
              {state.message}
            </p>
            {state.email && (
              <p>
                You are signed in as <strong>{state.email}</strong>.{' '}
                <button style={secondary} type="button" onClick={() => void signOut()}>
                  Sign in as someone else
                </button>
              </p>
            )}
            <p>
              <a href="#/">Go to the dashboard</a>
            </p>
          </>
        )}

        {state.kind === 'ready' && (
          <>
            <p>
              <strong>{state.invitation.inviterEmail}</strong> invited you ({state.email}) to join{' '}
              <strong data-testid="organization">{state.invitation.organizationName}</strong>.
            </p>
            <dl style={{ display: 'grid', gridTemplateColumns: 'max-content 1fr', gap: '6px 16px' }}>
              <dt>Organization</dt>
              <dd style={{ margin: 0 }}>{state.invitation.organizationName}</dd>
              <dt>Invited by</dt>
              <dd style={{ margin: 0 }}>{state.invitation.inviterEmail}</dd>
              <dt>Role</dt>
              <dd style={{ margin: 0 }} data-testid="role">
                {roles(state.invitation.role)}
              </dd>
              <dt>Valid until</dt>
              <dd style={{ margin: 0 }}>{new Date(state.invitation.expiresAt).toLocaleString()}</dd>
            </dl>
            {state.error && (
              <p role="alert" style={errorText}>
                {state.error}
              </p>
            )}
            <p style={{ marginTop: 24 }}>
              <button style={button} type="button" disabled={state.busy} onClick={() => void respond(true)}>
                Accept invitation
              </button>
              <button style={secondary} type="button" disabled={state.busy} onClick={() => void respond(false)}>
                Decline
              </button>
            </p>
          </>
        )}

        {state.kind === 'accepted' && (
          <>
            <p role="status">
              You joined <strong>{state.invitation.organizationName}</strong> as {roles(state.invitation.role)}.
            </p>
            <h2 style={{ fontSize: 16 }}>Members</h2>
            <ul data-testid="members">
              {state.members.map((m) => (
                <li key={m.id}>
                  {m.user.name ? `${m.user.name} ` : ''}&lt;{m.user.email}&gt; — {roles(m.role)}
                </li>
              ))}
            </ul>
            <p>
              <a href="#/">Go to the dashboard</a>
            </p>
          </>
        )}

        {state.kind === 'rejected' && (
          <p role="status">
            You declined the invitation to <strong>{state.invitation.organizationName}</strong>.
          </p>
        )}
      </main>
    </div>
  );
};
