/** The account page's passkeys: register one in this browser (with a name), rename, and remove. */
import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { startRegistration, type PublicKeyCredentialCreationOptionsJSON } from '@simplewebauthn/browser';
import { Alert, Box, Button, Stack, Table, TableBody, TableCell, TableHead, TableRow, TextField, Typography } from '@mui/material';
import { authApi } from '../common/api.ts';
import { formatDate } from '../common/money.tsx';
import { SectionCard as AccountSection } from './PasskeysCard.tsx';

interface PasskeyRow {
  id: string;
  name?: string;
  deviceType: string;
  createdAt: string;
}

const KEY = ['account', 'passkeys'];

export const PasskeysSection = () => {
  const client = useQueryClient();
  const passkeys = useQuery({ queryKey: KEY, queryFn: () => authApi<PasskeyRow[]>('/passkey/list-user-passkeys') });
  const [name, setName] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [editing, setEditing] = useState<{ id: string; name: string } | null>(null);

  const run = async (what: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    setNotice(null);
    try {
      await what();
      await client.invalidateQueries({ queryKey: KEY });
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Something went wrong');
    } finally {
      setBusy(false);
    }
  };

  const register = () =>
    run(async () => {
      const options = await authApi<PublicKeyCredentialCreationOptionsJSON>('/passkey/generate-register-options');
      const response = await startRegistration({ optionsJSON: options });
      await authApi('/passkey/verify-registration', { response, name: name.trim() || undefined });
      setName('');
      setNotice('Passkey added.');
    });

  const rename = () =>
    run(async () => {
      if (!editing) return;
      await authApi('/passkey/update-passkey', { id: editing.id, name: editing.name.trim() });
      setEditing(null);
      setNotice('Passkey renamed.');
    });

  const remove = (p: PasskeyRow) =>
    run(async () => {
      await authApi('/passkey/delete-passkey', { id: p.id });
      setNotice(p.name ? `Passkey "${p.name}" removed.` : 'Passkey removed.');
    });

  const rows = passkeys.data ?? [];
  return (
    <AccountSection title="Passkeys" id="passkeys">
      <Stack spacing={2}>
        <Typography color="text.secondary">Sign in with your device's screen lock or a security key instead of a password.</Typography>
        {error ? (
          <Alert severity="error" role="alert">
            {error}
          </Alert>
        ) : null}
        {notice ? <Alert severity="success">{notice}</Alert> : null}
        {rows.length ? (
          <Box sx={{ overflowX: 'auto' }}>
            <Table size="small" aria-label="Passkeys">
              <TableHead>
                <TableRow>
                  <TableCell>Name</TableCell>
                  <TableCell>Added</TableCell>
                  <TableCell />
                </TableRow>
              </TableHead>
              <TableBody>
                {rows.map((p) => (
                  <TableRow key={p.id}>
                    <TableCell>
                      {editing?.id === p.id ? (
                        <TextField
                          size="small"
                          label="New name"
                          value={editing.name}
                          onChange={(e) => setEditing({ id: p.id, name: e.target.value })}
                        />
                      ) : (
                        p.name || 'Unnamed passkey'
                      )}
                    </TableCell>
                    <TableCell>{formatDate(p.createdAt)}</TableCell>
                    <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>
                      {editing?.id === p.id ? (
                        <>
                          <Button size="small" onClick={() => void rename()} disabled={busy || !editing.name.trim()}>
                            Save
                          </Button>
                          <Button size="small" onClick={() => setEditing(null)}>
                            Cancel
                          </Button>
                        </>
                      ) : (
                        <>
                          <Button size="small" onClick={() => setEditing({ id: p.id, name: p.name ?? '' })} aria-label={`Rename passkey ${p.name || 'Unnamed passkey'}`}>
                            Rename
                          </Button>
                          <Button size="small" color="error" onClick={() => void remove(p)} disabled={busy} aria-label={`Remove passkey ${p.name || 'Unnamed passkey'}`}>
                            Remove
                          </Button>
                        </>
                      )}
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </Box>
        ) : (
          <Typography>No passkeys yet.</Typography>
        )}
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
          <TextField size="small" label="Passkey name" value={name} onChange={(e) => setName(e.target.value)} placeholder="e.g. Work laptop" />
          <Button variant="outlined" onClick={() => void register()} disabled={busy}>
            Add a passkey
          </Button>
        </Stack>
      </Stack>
    </AccountSection>
  );
};
