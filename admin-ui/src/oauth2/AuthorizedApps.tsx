/** "Authorized apps": the applications the signed-in user let act for them or their organizations; revoke any. */
import { useCallback, useEffect, useState } from 'react';
import { Title, useNotify } from 'react-admin';
import { Box, Button, Card, CardContent, List, ListItem, ListItemText, Stack, Typography } from '@mui/material';
import { api, type Page } from '../common/api.ts';
import { describeScope } from './scopes.ts';

interface Grant {
  id: string;
  created_at: string;
  client: { client_id: string; client_name: string | null };
  sub_type: 'user' | 'organization';
  organization_id: string | null;
  scopes: string[];
}

export const AuthorizedApps = () => {
  const notify = useNotify();
  const [grants, setGrants] = useState<Grant[] | null>(null);
  const load = useCallback(() => {
    api<Page<Grant>>('/v1/oauth2/grants', { query: { limit: 100 } }).then(
      (page) => setGrants(page.items),
      (err: Error) => notify(err.message, { type: 'error' }),
    );
  }, [notify]);
  useEffect(load, [load]);

  const revoke = async (g: Grant) => {
    try {
      await api(`/v1/oauth2/grants/${g.id}`, { method: 'DELETE' });
      notify(`Access of ${g.client.client_name ?? 'the application'} revoked`, { type: 'info' });
      load();
    } catch (err) {
      notify(err instanceof Error ? err.message : 'Could not revoke', { type: 'error' });
    }
  };

  return (
    <Card sx={{ mt: 2 }}>
      <Title title="Authorized apps" />
      <CardContent>
        <Typography variant="h6" component="h2" gutterBottom>
          Authorized apps
        </Typography>
        {grants && grants.length === 0 ? <Typography>No application has access.</Typography> : null}
        <Stack spacing={2}>
          {(grants ?? []).map((g) => (
            <Box key={g.id} component="section" aria-label={g.client.client_name ?? g.client.client_id} sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2 }}>
              <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ justifyContent: 'space-between' }}>
                <Box>
                  <Typography variant="subtitle1" component="h3">
                    {g.client.client_name ?? g.client.client_id}
                  </Typography>
                  <Typography variant="body2" sx={{ color: 'text.secondary' }}>
                    {g.sub_type === 'organization' ? 'Acts for an organization' : 'Acts for you'} · authorized {new Date(g.created_at).toLocaleString()}
                  </Typography>
                </Box>
                <Box>
                  <Button color="error" variant="outlined" onClick={() => revoke(g)}>
                    Revoke access
                  </Button>
                </Box>
              </Stack>
              <List dense>
                {g.scopes.map((s) => (
                  <ListItem key={s} disableGutters>
                    <ListItemText primary={describeScope(s)} />
                  </ListItem>
                ))}
              </List>
            </Box>
          ))}
        </Stack>
      </CardContent>
    </Card>
  );
};
