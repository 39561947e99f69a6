/**
 * Organization access tokens: create (comment, scopes, expiry; the token is shown once, with a copy
 * button), list, revoke.
 */
import { useState } from 'react';
import { Button as RaButton, DataTable, DeleteButton, List, TopToolbar, useNotify, useRefresh } from 'react-admin';
import {
  Alert,
  Box,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  FormGroup,
  FormLabel,
  MenuItem,
  Stack,
  TextField,
  Typography,
} from '@mui/material';
import AddIcon from '@mui/icons-material/Add';
import { api } from '../../common/api.ts';
import { CopyButton } from '../../common/CopyButton.tsx';
import { DateTimeField, formatDate } from '../../common/money.tsx';
import { currentOrganizationId } from '../../common/organization.ts';

const READ_WRITE = [
  'organizations', 'custom_fields', 'discounts', 'checkout_links', 'checkouts', 'products', 'benefits', 'events',
  'meters', 'files', 'subscriptions', 'customers', 'refunds', 'webhooks', 'license_keys', 'repositories', 'issues',
  'customer_portal',
];
export const TOKEN_SCOPES = [
  ...READ_WRITE.flatMap((r) => [`${r}:read`, `${r}:write`]),
  'customer_sessions:write', 'orders:read', 'metrics:read', 'external_organizations:read',
];

const expiries = [
  { id: String(7 * 86400), name: '7 days' },
  { id: String(30 * 86400), name: '30 days' },
  { id: String(90 * 86400), name: '90 days' },
  { id: String(365 * 86400), name: '1 year' },
  { id: 'never', name: 'No expiry' },
];

interface Token {
  id: string;
  comment: string;
  scopes: string[];
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

const CreateTokenDialog = ({ onClose }: { onClose: () => void }) => {
  const refresh = useRefresh();
  const [comment, setComment] = useState('');
  const [expiry, setExpiry] = useState(expiries[1]!.id);
  const [scopes, setScopes] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const toggle = (s: string) => setScopes((cur) => (cur.includes(s) ? cur.filter((x) => x !== s) : [...cur, s]));

  const create = async () => {
    setError(null);
    try {
      const res = await api<{ token: string }>('/v1/organization-access-tokens/', {
        body: {
          organization_id: currentOrganizationId(),
          comment: comment.trim(),
          scopes,
          ...(expiry === 'never' ? {} : { expires_in: Number(expiry) }),
        },
      });
      setToken(res.token);
      refresh();
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not create the token');
    }
  };

  return (
    <Dialog open onClose={onClose} aria-labelledby="token-title" fullWidth maxWidth="md">
      <DialogTitle id="token-title">{token ? 'Your new access token' : 'Create an access token'}</DialogTitle>
      <DialogContent>
        {token ? (
          <Stack spacing={2}>
            <Alert severity="warning">Copy it now: it is shown only once.</Alert>
            <Box component="code" sx={{ p: 1.5, bgcolor: 'grey.100', borderRadius: 1, wordBreak: 'break-all', fontSize: 14 }} aria-label="Access token">
              {token}
            </Box>
            <Box>
              <CopyButton value={token} what="Access token" label="Copy token" />
            </Box>
          </Stack>
        ) : (
          <Stack spacing={2} sx={{ pt: 1 }}>
            {error ? <Alert severity="error" role="alert">{error}</Alert> : null}
            <TextField label="Name" value={comment} onChange={(e) => setComment(e.target.value)} helperText="What uses this token, e.g. “Production server”" />
            <TextField select label="Expires" value={expiry} onChange={(e) => setExpiry(e.target.value)} sx={{ maxWidth: 240 }}>
              {expiries.map((x) => (
                <MenuItem key={x.id} value={x.id}>
                  {x.name}
                </MenuItem>
              ))}
            </TextField>
            <FormLabel component="legend">Scopes</FormLabel>
            <Stack direction="row" spacing={1}>
              <Button size="small" onClick={() => setScopes(TOKEN_SCOPES)}>Select all</Button>
              <Button size="small" onClick={() => setScopes(TOKEN_SCOPES.filter((s) => s.endsWith(':read')))}>All read</Button>
              <Button size="small" onClick={() => setScopes([])}>None</Button>
            </Stack>
            <FormGroup sx={{ display: 'grid', gridTemplateColumns: { xs: '1fr', sm: '1fr 1fr', md: '1fr 1fr 1fr' } }}>
              {TOKEN_SCOPES.map((s) => (
                <FormControlLabel key={s} control={<Checkbox size="small" checked={scopes.includes(s)} onChange={() => toggle(s)} />} label={s} />
              ))}
            </FormGroup>
          </Stack>
        )}
      </DialogContent>
      <DialogActions>
        {token ? (
          <Button onClick={onClose} variant="contained">Done</Button>
        ) : (
          <>
            <Button onClick={onClose}>Cancel</Button>
            <Button variant="contained" onClick={() => void create()} disabled={!scopes.length}>
              Create token
            </Button>
          </>
        )}
      </DialogActions>
    </Dialog>
  );
};

const Actions = () => {
  const [open, setOpen] = useState(false);
  return (
    <TopToolbar>
      <RaButton label="Create token" onClick={() => setOpen(true)} startIcon={<AddIcon />} />
      {open ? <CreateTokenDialog onClose={() => setOpen(false)} /> : null}
    </TopToolbar>
  );
};

const RevokeButton = ({ token }: { token: Token }) => {
  const notify = useNotify();
  return (
    <DeleteButton
      record={token}
      label="Revoke"
      mutationMode="pessimistic"
      confirmTitle={`Revoke “${token.comment || 'token'}”?`}
      confirmContent="Programs using it stop working at once."
      mutationOptions={{ onSuccess: () => notify('Token revoked', { type: 'info' }) }}
      redirect={false}
    />
  );
};

// Sortable by created_at, comment and last_used_at.
export const AccessTokenList = () => (
  <List actions={<Actions />} sort={{ field: 'created_at', order: 'DESC' }} exporter={false} title="Access tokens" empty={false}>
    <Typography variant="body2" sx={{ p: 2, color: 'text.secondary' }}>
      Tokens let your servers call the API for this organization (header <code>Authorization: Bearer …</code>).
    </Typography>
    <DataTable<Token> bulkActionButtons={false} rowClick={false}>
      <DataTable.Col source="comment" label="Name" render={(t) => t.comment || '—'} />
      <DataTable.Col label="Scopes" render={(t) => (t.scopes.length === TOKEN_SCOPES.length ? 'All scopes' : t.scopes.join(', '))} />
      <DataTable.Col source="expires_at" label="Expires" disableSort render={(t) => (t.expires_at ? formatDate(t.expires_at) : 'Never')} />
      <DataTable.Col source="last_used_at" label="Last used" render={(t) => (t.last_used_at ? formatDate(t.last_used_at) : 'Never')} />
      <DataTable.Col source="created_at" label="Created" field={DateTimeField} />
      <DataTable.Col<Token> label="Actions" render={(t) => <RevokeButton token={t} />} />
    </DataTable>
  </List>
);
