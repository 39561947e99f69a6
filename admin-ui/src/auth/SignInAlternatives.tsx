/** On the sign-in page: a button per configured social provider and "Continue with a passkey". */
import { useEffect, useState } from 'react';
import { startAuthentication, type PublicKeyCredentialRequestOptionsJSON } from '@simplewebauthn/browser';
import { Alert, Button, Divider, Stack } from '@mui/material';
import { authApi } from '../common/api.ts';

interface SocialProvider {
  id: string;
  name: string;
}

/** Where social sign-in and its errors land: the console, whose sign-in page shows `?error=`. */
const LANDING = '/dashboard/';

export const SignInAlternatives = () => {
  const [providers, setProviders] = useState<SocialProvider[]>([]);
  const [error, setError] = useState<string | null>(() => new URLSearchParams(window.location.search).get('error'));
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    authApi<SocialProvider[]>('/social-providers').then(setProviders, () => setProviders([]));
  }, []);

  const social = async (provider: string) => {
    setBusy(true);
    setError(null);
    try {
      const res = await authApi<{ url: string }>('/sign-in/social', { provider, callbackURL: LANDING, errorCallbackURL: LANDING });
      window.location.assign(res.url);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Sign-in failed');
      setBusy(false);
    }
  };

  const passkey = async () => {
    setBusy(true);
    setError(null);
    try {
      const options = await authApi<PublicKeyCredentialRequestOptionsJSON>('/passkey/generate-authenticate-options', {});
      const response = await startAuthentication({ optionsJSON: options });
      await authApi('/passkey/verify-authentication', { response });
      window.location.assign(LANDING);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Passkey sign-in failed');
      setBusy(false);
    }
  };

  return (
    <Stack spacing={1.5}>
      <Divider>or</Divider>
      {error ? (
        <Alert severity="error" role="alert">
          {error.replace(/_/g, ' ')}
        </Alert>
      ) : null}
      <Button variant="outlined" onClick={() => void passkey()} disabled={busy}>
        Continue with a passkey
      </Button>
      {providers.map((p) => (
        <Button key={p.id} variant="outlined" onClick={() => void social(p.id)} disabled={busy}>
          Continue with {p.name}
        </Button>
      ))}
    </Stack>
  );
};
