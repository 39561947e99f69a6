/**
 * Forgotten password: asks for the address and mails a link (`/api/auth/forget-password`); the link
 * goes through the auth service and lands on `#/reset-password?token=…` (see main.tsx), where the new
 * password is set (`/api/auth/reset-password`).
 */
import { useState, type FormEvent } from 'react';
import { Link as RouterLink, useLocation, useNavigate } from 'react-router-dom';
import { Alert, Button, Link, Stack, TextField } from '@mui/material';
import { authApi } from '../common/api.ts';
import { AuthCard } from './AuthCard.tsx';

/** The reset link's target; a relative path the auth service accepts, rewritten to a hash route by main.tsx. */
export const RESET_REDIRECT = '/dashboard/?page=reset-password';

export const ForgotPasswordPage = () => {
  const [sent, setSent] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const email = String(new FormData(e.currentTarget).get('email') ?? '').trim();
    try {
      await authApi('/forget-password', { email, redirectTo: RESET_REDIRECT });
      setSent(email);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not send the link');
    }
  };
  return (
    <AuthCard title="Reset your password" subtitle="We will mail you a link to choose a new password.">
      {sent ? (
        <Alert severity="success">If an account exists for {sent}, a link to reset its password is on its way.</Alert>
      ) : (
        <form onSubmit={(e) => void submit(e)} noValidate>
          <Stack spacing={2}>
            {error ? <Alert severity="error">{error}</Alert> : null}
            <TextField name="email" label="Email" type="email" autoComplete="email" required fullWidth />
            <Button type="submit" variant="contained">
              Send reset link
            </Button>
          </Stack>
        </form>
      )}
      <Link component={RouterLink} to="/login" sx={{ display: 'block', mt: 2 }}>
        Back to sign in
      </Link>
    </AuthCard>
  );
};

export const ResetPasswordPage = () => {
  const location = useLocation();
  const navigate = useNavigate();
  const params = new URLSearchParams(location.search);
  const token = params.get('token');
  const [error, setError] = useState<string | null>(
    params.get('error') || !token ? 'This reset link is invalid or has expired. Ask for a new one.' : null,
  );
  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const newPassword = String(form.get('password') ?? '');
    if (newPassword !== String(form.get('confirm') ?? '')) {
      setError('The two passwords differ.');
      return;
    }
    try {
      await authApi('/reset-password', { newPassword, token });
      sessionStorage.setItem('emporia.notice', 'Your password was changed. Sign in with the new one.');
      navigate('/login');
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not change the password');
    }
  };
  return (
    <AuthCard title="Choose a new password">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Stack spacing={2}>
          {error ? (
            <Alert severity="error" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextField name="password" label="New password" type="password" autoComplete="new-password" required fullWidth />
          <TextField name="confirm" label="Repeat the new password" type="password" autoComplete="new-password" required fullWidth />
          <Button type="submit" variant="contained" disabled={!token}>
            Change password
          </Button>
          <Link component={RouterLink} to="/forgot-password">
            Ask for a new link
          </Link>
        </Stack>
      </form>
    </AuthCard>
  );
};
