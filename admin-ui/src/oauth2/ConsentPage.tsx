/**
 * The OAuth2 consent page (the OpenID configuration's authorization endpoint): shows which
 * application asks, for whom (you, or one of your organizations) and what, in words; Approve sends
 * the browser back to the application with a code, Deny with `access_denied`.
 */
import { useEffect, useState } from 'react';
import { useLocation } from 'react-router-dom';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  CircularProgress,
  FormControl,
  FormControlLabel,
  FormLabel,
  List,
  ListItem,
  ListItemText,
  Radio,
  RadioGroup,
  Stack,
  Typography,
} from '@mui/material';
import { api } from '../common/api.ts';
import { describeScope } from './scopes.ts';

interface AuthorizeAnswer {
  client: { client_id: string; client_name: string | null; client_uri: string | null; tos_uri: string | null; policy_uri: string | null };
  sub_type: 'user' | 'organization';
  sub: { id: string; email?: string; slug?: string } | null;
  scopes: string[];
  organizations?: { id: string; slug: string }[];
}

export const ConsentPage = () => {
  const { search } = useLocation();
  const [request, setRequest] = useState<AuthorizeAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [organization, setOrganization] = useState('');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const controller = new AbortController();
    fetch(`/v1/oauth2/authorize${search}`, { credentials: 'include', headers: { Accept: 'application/json' }, signal: controller.signal })
      .then(async (res) => {
        const body = await res.json();
        if (!res.ok) throw new Error(body.error_description ?? body.detail ?? 'This authorization request is not valid.');
        setRequest(body as AuthorizeAnswer);
        if (body.organizations?.length === 1) setOrganization(body.organizations[0].id);
      })
      .catch((err: Error) => {
        if (err.name !== 'AbortError') setError(err.message);
      });
    return () => controller.abort();
  }, [search]);

  const decide = async (action: 'allow' | 'deny') => {
    setBusy(true);
    setError(null);
    try {
      const query = Object.fromEntries(new URLSearchParams(search));
      const res = await api<{ redirect_to?: string; error_description?: string }>('/v1/oauth2/consent', {
        body: { ...query, action, ...(request?.sub_type === 'organization' && organization ? { sub: organization } : {}) },
      });
      if (!res.redirect_to) throw new Error(res.error_description ?? 'The request could not be completed.');
      window.location.assign(res.redirect_to);
    } catch (err) {
      setBusy(false);
      const oauth = (err as { body?: { error_description?: string } }).body?.error_description;
      setError(oauth ?? (err instanceof Error ? err.message : 'The request could not be completed.'));
    }
  };

  const name = request?.client.client_name || 'An application';
  return (
    <Box component="main" sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', bgcolor: '#f5f6f8', p: 2 }}>
      <Card sx={{ width: '100%', maxWidth: 480 }}>
        <CardContent sx={{ p: { xs: 2.5, sm: 4 } }}>
          <Typography variant="overline" component="p" sx={{ color: 'text.secondary' }}>
            Emporia
          </Typography>
          <Typography variant="h5" component="h1" gutterBottom>
            {request ? `Authorize ${name}` : 'Authorize an application'}
          </Typography>
          {error ? (
            <Alert severity="error" role="alert" sx={{ mb: 2 }}>
              {error}
            </Alert>
          ) : null}
          {!request && !error ? <CircularProgress aria-label="Loading" /> : null}
          {request ? (
            <Stack spacing={2}>
              <Typography variant="body1">
                {request.sub_type === 'organization'
                  ? `${name} wants to act for one of your organizations.`
                  : `${name} wants to act for you (${request.sub?.email ?? 'your account'}).`}
                {request.client.client_uri ? (
                  <>
                    {' '}
                    <a href={request.client.client_uri} target="_blank" rel="noreferrer noopener">
                      {new URL(request.client.client_uri).host}
                    </a>
                  </>
                ) : null}
              </Typography>
              {request.sub_type === 'organization' ? (
                <FormControl>
                  <FormLabel id="consent-organization">Organization</FormLabel>
                  <RadioGroup aria-labelledby="consent-organization" value={organization} onChange={(e) => setOrganization(e.target.value)}>
                    {(request.organizations ?? []).map((o) => (
                      <FormControlLabel key={o.id} value={o.id} control={<Radio />} label={o.slug} />
                    ))}
                  </RadioGroup>
                </FormControl>
              ) : null}
              <Box>
                <Typography variant="subtitle2" component="h2" id="consent-scopes">
                  It will be able to
                </Typography>
                <List dense aria-labelledby="consent-scopes">
                  {request.scopes.map((s) => (
                    <ListItem key={s} disableGutters>
                      <ListItemText primary={describeScope(s)} secondary={s} />
                    </ListItem>
                  ))}
                </List>
              </Box>
              <Stack direction="row" spacing={1} sx={{ justifyContent: 'flex-end' }}>
                <Button onClick={() => decide('deny')} disabled={busy}>
                  Deny
                </Button>
                <Button
                  variant="contained"
                  onClick={() => decide('allow')}
                  disabled={busy || (request.sub_type === 'organization' && !organization)}
                >
                  Approve
                </Button>
              </Stack>
            </Stack>
          ) : null}
        </CardContent>
      </Card>
    </Box>
  );
};
