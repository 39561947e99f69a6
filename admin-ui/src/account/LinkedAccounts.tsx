/** The account page's sign-in providers: the accounts linked to this user, link another provider, unlink one. */
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Button, List, ListItem, ListItemText, Stack, Typography } from '@mui/material';
import { authApi } from '../common/api.ts';
import { formatDate } from '../common/money.tsx';
import { SectionCard as AccountSection } from './PasskeysCard.tsx';

interface LinkedAccount {
  id: string;
  provider: string;
  accountId: string;
  createdAt: string;
}

export interface SocialProvider {
  id: string;
  name: string;
}

const KEY = ['account', 'linked-accounts'];

export const LinkedAccountsSection = () => {
  const client = useQueryClient();
  const accounts = useQuery({ queryKey: KEY, queryFn: () => authApi<LinkedAccount[]>('/list-accounts') });
  const providers = useQuery({ queryKey: ['social-providers'], queryFn: () => authApi<SocialProvider[]>('/social-providers') });
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const linkError = new URLSearchParams(window.location.search).get('error');

  const nameOf = (id: string) => (id === 'credential' ? 'Email and password' : (providers.data?.find((p) => p.id === id)?.name ?? id));

  const link = async (provider: string) => {
    setBusy(true);
    setError(null);
    try {
      const res = await authApi<{ url: string }>('/link-social', { provider, callbackURL: '/dashboard/' });
      window.location.assign(res.url);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not start linking');
      setBusy(false);
    }
  };

  const unlink = async (a: LinkedAccount) => {
    setBusy(true);
    setError(null);
    try {
      await authApi('/unlink-account', { providerId: a.provider, accountId: a.accountId });
      await client.invalidateQueries({ queryKey: KEY });
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not unlink');
    } finally {
      setBusy(false);
    }
  };

  const linked = accounts.data ?? [];
  const linkable = (providers.data ?? []).filter((p) => !linked.some((a) => a.provider === p.id));
  return (
    <AccountSection title="Sign-in methods" id="linked-accounts">
      <Stack spacing={2}>
        {error || linkError ? (
          <Alert severity="error" role="alert">
            {error ?? `Linking failed: ${linkError}`}
          </Alert>
        ) : null}
        <List dense aria-label="Linked sign-in methods">
          {linked.map((a) => (
            <ListItem
              key={a.id}
              secondaryAction={
                <Button size="small" color="error" disabled={busy || linked.length < 2} onClick={() => void unlink(a)} aria-label={`Unlink ${nameOf(a.provider)}`}>
                  Unlink
                </Button>
              }
            >
              <ListItemText primary={nameOf(a.provider)} secondary={`Linked ${formatDate(a.createdAt)}`} />
            </ListItem>
          ))}
        </List>
        {linked.length < 2 ? <Typography color="text.secondary">Your only sign-in method cannot be unlinked.</Typography> : null}
        {linkable.length ? (
          <Stack direction="row" spacing={1} useFlexGap sx={{ flexWrap: 'wrap' }}>
            {linkable.map((p) => (
              <Button key={p.id} variant="outlined" disabled={busy} onClick={() => void link(p.id)}>
                Link {p.name}
              </Button>
            ))}
          </Stack>
        ) : null}
      </Stack>
    </AccountSection>
  );
};
