/**
 * The second step of signing in, after the password was accepted and the server answered
 * `twoFactorRedirect`: a code from the authenticator app, a code sent by mail, or a backup code; with
 * "trust this device" (30 days without the second step in this browser).
 */
import { useState, type FormEvent } from 'react';
import { Alert, Button, Checkbox, FormControlLabel, Stack, TextField, ToggleButton, ToggleButtonGroup, Typography } from '@mui/material';
import { authApi } from '../common/api.ts';

type Method = 'totp' | 'otp' | 'backup';

const PATHS: Record<Method, string> = {
  totp: '/two-factor/verify-totp',
  otp: '/two-factor/verify-otp',
  backup: '/two-factor/verify-backup-code',
};
const LABELS: Record<Method, string> = {
  totp: 'Code from your authenticator app',
  otp: 'Code from the mail',
  backup: 'Backup code',
};

/** Thrown by the sign-in when the account asks for a second factor. */
export class TwoFactorRequired extends Error {
  constructor() {
    super('Two-factor authentication required');
  }
}

export const TwoFactorStep = ({ onDone, onCancel }: { onDone: () => void; onCancel: () => void }) => {
  const [method, setMethod] = useState<Method>('totp');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const choose = (m: Method) => {
    setMethod(m);
    setError(null);
    if (m === 'otp') {
      authApi('/two-factor/send-otp', {}).then(
        () => setNotice('We mailed you a sign-in code.'),
        (err: unknown) => setError(err instanceof Error ? err.message : 'Could not send the code'),
      );
    }
  };

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    try {
      await authApi(PATHS[method], { code: String(form.get('code') ?? '').trim(), trustDevice: form.get('trust') === 'on' });
      onDone();
    } catch (err) {
      const message = err instanceof Error ? err.message : 'Verification failed';
      setError(/cookie/i.test(message) ? 'This sign-in has expired. Please start again.' : message);
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Second step">
      <Stack spacing={2}>
        <Typography>Your account is protected by two-factor authentication.</Typography>
        <ToggleButtonGroup exclusive size="small" value={method} onChange={(_, m: Method | null) => m && choose(m)} aria-label="Verification method">
          <ToggleButton value="totp">Authenticator app</ToggleButton>
          <ToggleButton value="otp">Code by mail</ToggleButton>
          <ToggleButton value="backup">Backup code</ToggleButton>
        </ToggleButtonGroup>
        {notice && method === 'otp' ? <Alert severity="info">{notice}</Alert> : null}
        {error ? (
          <Alert severity="error" role="alert">
            {error}
          </Alert>
        ) : null}
        <TextField key={method} name="code" label={LABELS[method]} autoComplete="one-time-code" required autoFocus fullWidth />
        <FormControlLabel control={<Checkbox name="trust" />} label="Trust this device for 30 days" />
        <Button type="submit" variant="contained" size="large" disabled={busy}>
          Verify
        </Button>
        <Button onClick={onCancel}>Back to sign-in</Button>
      </Stack>
    </form>
  );
};
