/** Create an account (name, email, optional username, password); signs in and goes to the first-run page. */
import { useState, type FormEvent } from 'react';
import { Link as RouterLink } from 'react-router-dom';
import { useLogin } from 'react-admin';
import { Alert, Button, Link, Stack, TextField } from '@mui/material';
import { AuthCard } from './AuthCard.tsx';
import { VerificationPending } from './authProvider.ts';

export const SignUpPage = () => {
  const login = useLogin();
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    const password = String(form.get('password') ?? '');
    if (password.length < 8) {
      setError('Password too short: use at least 8 characters.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await login(
        {
          signUp: {
            name: String(form.get('name') ?? ''),
            email: String(form.get('email') ?? ''),
            username: String(form.get('username') ?? ''),
            password,
          },
          redirectTo: '/welcome',
        },
      );
    } catch (err) {
      if (err instanceof VerificationPending) setPending(err.message);
      else setError(err instanceof Error ? err.message : 'Sign-up failed');
      setBusy(false);
    }
  };

  if (pending) {
    return (
      <AuthCard title="Check your inbox">
        <Alert severity="info">{pending}</Alert>
        <Link component={RouterLink} to="/login" sx={{ display: 'block', mt: 2 }}>
          Back to sign in
        </Link>
      </AuthCard>
    );
  }

  return (
    <AuthCard title="Create your seller account" subtitle="Sell products and subscriptions in minutes.">
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Stack spacing={2}>
          {error ? (
            <Alert severity="error" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextField name="name" label="Your name" autoComplete="name" required fullWidth />
          <TextField name="email" label="Email" type="email" autoComplete="email" required fullWidth />
          <TextField
            name="username"
            label="Username (optional)"
            autoComplete="username"
            helperText="3 to 30 letters, digits, dots or underscores; lets you sign in without your email"
            fullWidth
          />
          <TextField
            name="password"
            label="Password"
            type="password"
            autoComplete="new-password"
            helperText="At least 8 characters"
            required
            fullWidth
          />
          <Button type="submit" variant="contained" size="large" disabled={busy}>
            Create account
          </Button>
          <Link component={RouterLink} to="/login">
            Already have an account? Sign in
          </Link>
        </Stack>
      </form>
    </AuthCard>
  );
};
