/** Passwordless sign-in: email → mailed one-time code → customer session. */
import { useRef, useState, type FormEvent } from 'react';
import { ApiError, errorMessage, request } from '../../api.ts';
import { Alert, Field } from '../../components/ui.tsx';
import type { Organization } from '../../lib/types.ts';

export function SignIn({
  organization,
  initialEmail,
  notice,
  onSignedIn,
  onCancel,
}: {
  organization: Organization;
  initialEmail?: string | undefined;
  notice?: string | null | undefined;
  onSignedIn: (token: string, email: string) => void;
  onCancel?: (() => void) | undefined;
}) {
  const [step, setStep] = useState<'email' | 'code'>('email');
  const [email, setEmail] = useState(initialEmail ?? '');
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [sent, setSent] = useState(false);
  const codeRef = useRef<HTMLInputElement>(null);

  const send = async (event?: FormEvent) => {
    event?.preventDefault();
    setError(null);
    setFieldError(undefined);
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim())) {
      setFieldError('Enter a valid email address.');
      return;
    }
    setBusy(true);
    try {
      await request('POST', '/v1/customer-portal/customer-session/request', { email: email.trim(), organization_id: organization.id });
      setStep('code');
      setSent(true);
      setCode('');
      requestAnimationFrame(() => codeRef.current?.focus());
    } catch (e) {
      setError(e instanceof ApiError && e.status === 429 ? 'Too many codes were requested. Wait a few minutes and try again.' : errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  const verify = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setFieldError(undefined);
    if (!code.trim()) {
      setFieldError('Enter the code from the email.');
      return;
    }
    setBusy(true);
    try {
      const { token } = await request<{ token: string }>('POST', '/v1/customer-portal/customer-session/authenticate', { code: code.trim() });
      onSignedIn(token, email.trim());
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) setFieldError('This code is invalid or has expired. Check the email, or send a new code.');
      else if (e instanceof ApiError && e.status === 429) setError('Too many attempts. Wait a few minutes and try again.');
      else setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card sign-in" aria-labelledby="sign-in-heading">
      <h2 id="sign-in-heading">Sign in to see your purchases</h2>
      {notice && <Alert kind="info">{notice}</Alert>}
      {step === 'email' ? (
        <form onSubmit={send} noValidate>
          <p>Enter the email address you used to buy from {organization.name}. We will email you a one-time code — no password needed.</p>
          <Field label="Email" error={fieldError}>
            {(p) => <input {...p} type="email" name="email" autoComplete="email" value={email} onChange={(e) => setEmail(e.target.value)} required />}
          </Field>
          {error && <Alert>{error}</Alert>}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Sending…' : 'Email me a sign-in code'}
            </button>
            {onCancel && (
              <button type="button" onClick={onCancel}>
                Cancel
              </button>
            )}
          </div>
        </form>
      ) : (
        <form onSubmit={verify} noValidate>
          <p role="status">
            {sent ? 'If there is an account for ' : ''}
            <strong>{email}</strong>
            {sent ? ', a code is on its way. It expires in 15 minutes.' : ''}
          </p>
          <Field label="Sign-in code" error={fieldError} hint="8 characters, from the email.">
            {(p) => (
              <input
                {...p}
                ref={codeRef}
                name="code"
                autoComplete="one-time-code"
                autoCapitalize="characters"
                spellCheck={false}
                value={code}
                onChange={(e) => setCode(e.target.value)}
              />
            )}
          </Field>
          {error && <Alert>{error}</Alert>}
          <div className="actions">
            <button type="submit" className="primary" disabled={busy}>
              {busy ? 'Signing in…' : 'Sign in'}
            </button>
            <button type="button" onClick={() => void send()} disabled={busy}>
              Send a new code
            </button>
            <button type="button" className="link" onClick={() => setStep('email')}>
              Use another email
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
