/**
 * "OAuth applications": the OAuth2 clients the signed-in user registered. Register one (its client
 * secret is shown once, with a copy button), see its client id and redirect URIs, delete it.
 */
import { useCallback, useEffect, useState } from 'react';
import { Title, useNotify } from 'react-admin';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import { api, type Page } from '../common/api.ts';
import { CopyButton } from '../common/CopyButton.tsx';

export interface OAuthClient {
  client_id: string;
  client_secret: string;
  client_name: string;
  client_uri: string | null;
  redirect_uris: string[];
  token_endpoint_auth_method: 'client_secret_basic' | 'client_secret_post' | 'none';
  scope: string;
  created_at: string;
}

const METHODS = [
  { id: 'client_secret_post', name: 'Confidential (secret in the request body)' },
  { id: 'client_secret_basic', name: 'Confidential (secret by HTTP Basic)' },
  { id: 'none', name: 'Public (no secret, PKCE required)' },
];

const RegisterDialog = ({ onClose, onCreated }: { onClose: () => void; onCreated: () => void }) => {
  const [name, setName] = useState('');
  const [homepage, setHomepage] = useState('');
  const [redirects, setRedirects] = useState('');
  const [method, setMethod] = useState('client_secret_post');
  const [scope, setScope] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<OAuthClient | null>(null);

  const register = async () => {
    setError(null);
    try {
      const client = await api<OAuthClient>('/v1/oauth2/register', {
        body: {
          client_name: name.trim(),
          ...(homepage.trim() ? { client_uri: homepage.trim() } : {}),
          redirect_uris: redirects.split(/\s+/).filter(Boolean),
          token_endpoint_auth_method: method,
          ...(scope.trim() ? { scope: scope.trim() } : {}),
        },
      });
      setCreated(client);
      onCreated();
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not register the application');
    }
  };

  return (
    <Dialog open onClose={onClose} aria-labelledby="oauth-app-title" fullWidth maxWidth="sm">
      <DialogTitle id="oauth-app-title">{created ? 'Application registered' : 'Register an OAuth application'}</DialogTitle>
      <DialogContent>
        {created ? (
          <Stack spacing={2}>
            <Typography>Client ID</Typography>
            <Box component="code" aria-label="Client ID" sx={{ p: 1.5, bgcolor: 'grey.100', borderRadius: 1, wordBreak: 'break-all' }}>
              {created.client_id}
            </Box>
            {created.client_secret ? (
              <>
                <Alert severity="warning">Copy the client secret now: it is shown only once.</Alert>
                <Box component="code" aria-label="Client secret" sx={{ p: 1.5, bgcolor: 'grey.100', borderRadius: 1, wordBreak: 'break-all' }}>
                  {created.client_secret}
                </Box>
                <Box>
                  <CopyButton value={created.client_secret} what="Client secret" label="Copy secret" />
                </Box>
              </>
            ) : (
              <Alert severity="info">A public application has no secret; it must use PKCE.</Alert>
            )}
          </Stack>
        ) : (
          <Stack spacing={2} sx={{ pt: 1 }}>
            {error ? (
              <Alert severity="error" role="alert">
                {error}
              </Alert>
            ) : null}
            <TextField label="Application name" value={name} onChange={(e) => setName(e.target.value)} required />
            <TextField label="Homepage URL" value={homepage} onChange={(e) => setHomepage(e.target.value)} />
            <TextField
              label="Redirect URIs"
              value={redirects}
              onChange={(e) => setRedirects(e.target.value)}
              multiline
              minRows={2}
              required
              helperText="One per line; https, or http on 127.0.0.1 / localhost (any port)"
            />
            <TextField select label="Client type" value={method} onChange={(e) => setMethod(e.target.value)}>
              {METHODS.map((m) => (
                <MenuItem key={m.id} value={m.id}>
                  {m.name}
                </MenuItem>
              ))}
            </TextField>
            <TextField label="Scopes" value={scope} onChange={(e) => setScope(e.target.value)} helperText="Space-separated; empty for every scope" />
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>{created ? 'Done' : 'Cancel'}</Button>
        {created ? null : (
          <Button variant="contained" onClick={register}>
            Register
          </Button>
        )}
      </DialogActions>
    </Dialog>
  );
};

export const OAuthApplications = () => {
  const notify = useNotify();
  const [clients, setClients] = useState<OAuthClient[] | null>(null);
  const [open, setOpen] = useState(false);
  const load = useCallback(() => {
    api<Page<OAuthClient>>('/v1/oauth2/', { query: { limit: 100 } }).then(
      (page) => setClients(page.items),
      (err: Error) => notify(err.message, { type: 'error' }),
    );
  }, [notify]);
  useEffect(load, [load]);

  const remove = async (c: OAuthClient) => {
    if (!window.confirm(`Delete ${c.client_name}? Every token it holds stops working.`)) return;
    try {
      await api(`/v1/oauth2/register/${encodeURIComponent(c.client_id)}`, { method: 'DELETE' });
      notify(`${c.client_name} deleted`, { type: 'info' });
      load();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Could not delete', { type: 'error' });
    }
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="OAuth applications" />
      <CardContent>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ justifyContent: 'space-between', mb: 2 }}>
          <Typography variant="h6" component="h2">
            OAuth applications
          </Typography>
          <Button variant="contained" startIcon={<AddIcon />} onClick={() => setOpen(true)}>
            Register application
          </Button>
        </Stack>
        <Typography variant="body2" sx={{ color: 'text.secondary', mb: 2 }}>
          Apps that sign people in with Emporia or act for them and their organizations through OAuth2 / OpenID Connect.
        </Typography>
        {clients && clients.length === 0 ? <Typography>No applications yet.</Typography> : null}
        {clients && clients.length ? (
          <Box sx={{ overflowX: 'auto' }}>
            <Table size="small" aria-label="OAuth applications">
              <TableHead>
                <TableRow>
                  <TableCell>Name</TableCell>
                  <TableCell>Client ID</TableCell>
                  <TableCell>Redirect URIs</TableCell>
                  <TableCell>Type</TableCell>
                  <TableCell />
                </TableRow>
              </TableHead>
              <TableBody>
                {clients.map((c) => (
                  <TableRow key={c.client_id}>
                    <TableCell>{c.client_name}</TableCell>
                    <TableCell sx={{ fontFamily: 'monospace', wordBreak: 'break-all' }}>{c.client_id}</TableCell>
                    <TableCell sx={{ wordBreak: 'break-all' }}>{c.redirect_uris.join(', ')}</TableCell>
                    <TableCell>{c.token_endpoint_auth_method === 'none' ? 'Public' : 'Confidential'}</TableCell>
                    <TableCell>
                      <Button color="error" size="small" onClick={() => remove(c)} aria-label={`Delete ${c.client_name}`}>
                        Delete
                      </Button>
                    </TableCell>
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </Box>
        ) : null}
        {open ? <RegisterDialog onClose={() => setOpen(false)} onCreated={load} /> : null}
      </CardContent>
    </Card>
  );
};
