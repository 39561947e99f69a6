/**
 * Two-factor authentication on the account page: enrol an authenticator app (the otpauth URI to scan
 * or type, confirmed by a first code), the backup codes shown once, new backup codes, and turning it off.
 */
import { useState, type FormEvent } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Box, Button, Stack, TextField, Typography } from '@mui/material';
import { authApi } from '../common/api.ts';
import { AccountSection } from './AccountSection.tsx';

type Step = { kind: 'idle' } | { kind: 'confirm'; uri: string; codes: string[] } | { kind: 'codes'; codes: string[] };

const secretOf = (uri: string) => new URL(uri).searchParams.get('secret') ?? '';

const BackupCodes = ({ codes }: { codes: string[] }) => (
  <Box>
    <Typography gutterBottom>
      Backup codes: each signs you in once if you lose your authenticator. Keep them somewhere safe; they are not shown again.
    </Typography>
    <Box component="ul" aria-label="Backup codes" sx={{ fontFamily: 'monospace', columns: 2, pl: 3 }}>
      {codes.map((c) => (
        <li key={c}>{c}</li>
      ))}
    </Box>
  </Box>
);

export const TwoFactorSection = () => {
  const client = useQueryClient();
  const session = useQuery({
    queryKey: ['account', 'two-factor'],
    queryFn: () => authApi<{ user: { twoFactorEnabled?: boolean } } | null>('/get-session', undefined, { disableCookieCache: true }),
  });
  const enabled = !!session.data?.user.twoFactorEnabled;
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const run = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Something went wrong');
    } finally {
      setBusy(false);
    }
  };
  const field = (e: FormEvent<HTMLFormElement>, name: string) => String(new FormData(e.currentTarget).get(name) ?? '');

  const start = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const password = field(e, 'password');
    void run(async () => {
      const res = await authApi<{ totpURI: string; backupCodes: string[] }>('/two-factor/enable', { password });
      setStep({ kind: 'confirm', uri: res.totpURI, codes: res.backupCodes });
    });
  };
  const confirm = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const code = field(e, 'code').trim();
    if (step.kind !== 'confirm') return;
    void run(async () => {
      try {
        await authApi('/two-factor/verify-totp', { code });
      } catch {
        throw new Error('That code is not right. Enter the current code from your authenticator app.');
      }
      setStep({ kind: 'codes', codes: step.codes });
      await client.invalidateQueries({ queryKey: ['account'] });
    });
  };
  const regenerate = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const password = field(e, 'password');
    void run(async () => {
      const res = await authApi<{ backupCodes: string[] }>('/two-factor/generate-backup-codes', { password });
      setStep({ kind: 'codes', codes: res.backupCodes });
    });
  };
  const turnOff = (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const password = field(e, 'disable-password');
    void run(async () => {
      await authApi('/two-factor/disable', { password });
      setStep({ kind: 'idle' });
      await client.invalidateQueries({ queryKey: ['account'] });
    });
  };

  return (
    <AccountSection title="Two-factor authentication" id="two-factor">
      <Stack spacing={2}>
        {error ? (
          <Alert severity="error" role="alert">
            {error}
          </Alert>
        ) : null}
        {step.kind === 'codes' ? (
          <>
            <Alert severity="success">Two-factor authentication is on.</Alert>
            <BackupCodes codes={step.codes} />
            <Box>
              <Button variant="outlined" onClick={() => setStep({ kind: 'idle' })}>
                I have saved my backup codes
              </Button>
            </Box>
          </>
        ) : step.kind === 'confirm' ? (
          <form onSubmit={confirm} noValidate>
            <Stack spacing={2}>
              <Typography>
                Add this account to your authenticator app: open the link on this device, or enter the key by hand.
              </Typography>
              <Box>
                <a href={step.uri}>Open in authenticator app</a>
              </Box>
              <TextField label="Setup key" value={secretOf(step.uri)} slotProps={{ input: { readOnly: true } }} fullWidth />
              <TextField name="code" label="Code from the app" inputMode="numeric" autoComplete="one-time-code" required fullWidth />
              <Box>
                <Button type="submit" variant="contained" disabled={busy}>
                  Confirm and turn on
                </Button>
              </Box>
            </Stack>
          </form>
        ) : enabled ? (
          <>
            <Typography>Two-factor authentication is on: signing in asks for a code from your authenticator app.</Typography>
            <form onSubmit={regenerate} noValidate>
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
                <TextField name="password" label="Password" type="password" autoComplete="current-password" size="small" required />
                <Button type="submit" variant="outlined" disabled={busy}>
                  New backup codes
                </Button>
              </Stack>
            </form>
            <form onSubmit={turnOff} noValidate>
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
                <TextField name="disable-password" label="Password to turn off" type="password" autoComplete="current-password" size="small" required />
                <Button type="submit" color="error" variant="outlined" disabled={busy}>
                  Turn off two-factor
                </Button>
              </Stack>
            </form>
          </>
        ) : (
          <form onSubmit={start} noValidate>
            <Stack spacing={2}>
              <Typography>Protect your account with a code from an authenticator app at every sign-in.</Typography>
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1}>
                <TextField name="password" label="Password" type="password" autoComplete="current-password" size="small" required />
                <Button type="submit" variant="contained" disabled={busy}>
                  Set up two-factor
                </Button>
              </Stack>
            </Stack>
          </form>
        )}
      </Stack>
    </AccountSection>
  );
};
