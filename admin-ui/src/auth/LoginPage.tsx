/** Sign in with an email address or a username; links to sign-up and the forgotten-password page. */
import { useState, type FormEvent } from 'react';
import { Link as RouterLink, useLocation } from 'react-router-dom';
import { useLogin } from 'react-admin';
import { Alert, Button, Link, Stack, TextField } from '@mui/material';
import { AuthCard } from './AuthCard.tsx';
import { TwoFactorRequired, TwoFactorStep } from '../account/TwoFactorStep.tsx';
import { SignInAlternatives } from './SignInAlternatives.tsx';

export const LoginPage = () => {
  const login = useLogin();
  const location = useLocation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [secondStep, setSecondStep] = useState<string | null>(null);
  const notice = new URLSearchParams(location.search).get('notice') ?? (sessionStorage.getItem('emporia.notice') || null);

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      sessionStorage.removeItem('emporia.notice');
      const next = location.state as { nextPathname?: string; nextSearch?: string } | null;
      const redirectTo = next?.nextPathname ? `${next.nextPathname}${next.nextSearch ?? ''}` : '/';
      try {
        await login({ email: String(form.get('email') ?? ''), password: String(form.get('password') ?? ''), redirectTo });
      } catch (err) {
        if (!(err instanceof TwoFactorRequired)) throw err;
        setSecondStep(redirectTo);
        setBusy(false);
      }
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Sign-in failed');
      setBusy(false);
    }
  };

  if (secondStep !== null) {
    return (
      <AuthCard title="Verify it's you">
        <TwoFactorStep
          onDone={() => {
            // The session cookie is set: load the console afresh at the page asked for.
            window.location.hash = `#${secondStep}`;
            window.location.reload();
          }}
          onCancel={() => setSecondStep(null)}
        />
      </AuthCard>
    );
  }

  return (
    <AuthCard title="Sign in to your seller console">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Stack spacing={2}>
          {notice ? <Alert severity="success">{notice}</Alert> : null}
          {error ? (
            <Alert severity="error" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextField name="email" label="Email or username" autoComplete="username" required autoFocus fullWidth />
          <TextField name="password" label="Password" type="password" autoComplete="current-password" required fullWidth />
          <Button type="submit" variant="contained" size="large" disabled={busy}>
            Sign in
          </Button>
          <Stack direction="row" sx={{ justifyContent: 'space-between' }}>
            <Link component={RouterLink} to="/sign-up">
              Create an account
            </Link>
            <Link component={RouterLink} to="/forgot-password">
              Forgot your password?
            </Link>
          </Stack>
          <SignInAlternatives />
        </Stack>
      </form>
    </AuthCard>
  );
};
