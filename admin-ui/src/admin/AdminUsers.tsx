/**
 * The admin section (`/admin/users`, shown to admins only): every user of the platform, searchable,
 * with ban / unban and impersonation (the console then runs as that user under a banner).
 */
import { useState } from 'react';
import { Title } from 'react-admin';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Box, Button, Chip, Stack, Table, TableBody, TableCell, TableHead, TableRow, TextField } from '@mui/material';
import { authApi } from '../common/api.ts';
import { formatDate } from '../common/money.tsx';

interface AdminUser {
  id: string;
  email: string;
  name: string;
  role: string;
  banned: boolean;
  banReason: string | null;
  createdAt: string;
}

/** Loads the console afresh at a page: every cached answer belonged to the other user. */
const reloadAt = (hash: string) => () => {
  window.location.hash = `#${hash}`;
  window.location.reload();
};

/** Whether the signed-in user may use the admin section. */
export function useIsAdmin(): boolean {
  const probe = useQuery({
    queryKey: ['admin', 'is-admin'],
    queryFn: () => authApi<{ success: boolean }>('/admin/has-permission', { permissions: { user: ['list'] } }),
    staleTime: 60_000,
  });
  return !!probe.data?.success;
}

const PAGE_SIZE = 50;

export const AdminUsers = () => {
  const client = useQueryClient();
  const [search, setSearch] = useState('');
  const [page, setPage] = useState(0);
  const [error, setError] = useState<string | null>(null);
  const users = useQuery({
    queryKey: ['admin', 'users', search, page],
    queryFn: () =>
      authApi<{ users: AdminUser[]; total: number }>('/admin/list-users', undefined, {
        limit: PAGE_SIZE,
        offset: page * PAGE_SIZE,
        sortBy: 'createdAt',
        sortDirection: 'desc',
        ...(search ? { searchValue: search, searchField: 'email' } : {}),
      }),
  });
  const act = async (path: string, body: unknown, after?: () => void) => {
    setError(null);
    try {
      await authApi(path, body);
      if (after) after();
      else await client.invalidateQueries({ queryKey: ['admin', 'users'] });
    } catch (err) {
      setError(err instanceof Error ? err.message : 'The action failed');
    }
  };
  return (
    <Box sx={{ mt: 2 }}>
      <Title title="Users" />
      <Stack spacing={2}>
        <TextField
          label="Search by email"
          value={search}
          onChange={(e) => {
            setSearch(e.target.value);
            setPage(0);
          }}
          size="small"
          sx={{ maxWidth: 360 }}
        />
        {error || users.error ? (
          <Alert severity="error" role="alert">
            {error ?? users.error?.message}
          </Alert>
        ) : null}
        <Box sx={{ overflowX: 'auto' }}>
          <Table size="small" aria-label="Users">
            <TableHead>
              <TableRow>
                <TableCell>Email</TableCell>
                <TableCell>Name</TableCell>
                <TableCell>Role</TableCell>
                <TableCell>Created</TableCell>
                <TableCell />
              </TableRow>
            </TableHead>
            <TableBody>
              {(users.data?.users ?? []).map((u) => (
                <TableRow key={u.id}>
                  <TableCell sx={{ overflowWrap: 'anywhere' }}>
                    {u.email} {u.banned ? <Chip size="small" color="error" label="Banned" /> : null}
                  </TableCell>
                  <TableCell>{u.name}</TableCell>
                  <TableCell>{u.role}</TableCell>
                  <TableCell>{formatDate(u.createdAt)}</TableCell>
                  <TableCell align="right">
                    <Stack direction="row" spacing={1} sx={{ justifyContent: 'flex-end' }}>
                      {u.banned ? (
                        <Button size="small" onClick={() => void act('/admin/unban-user', { userId: u.id })} aria-label={`Unban ${u.email}`}>
                          Unban
                        </Button>
                      ) : (
                        <Button size="small" color="error" onClick={() => void act('/admin/ban-user', { userId: u.id })} aria-label={`Ban ${u.email}`}>
                          Ban
                        </Button>
                      )}
                      <Button
                        size="small"
                        onClick={() => void act('/admin/impersonate-user', { userId: u.id }, reloadAt('/'))}
                        aria-label={`Impersonate ${u.email}`}
                      >
                        Impersonate
                      </Button>
                    </Stack>
                  </TableCell>
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </Box>
        {users.data ? (
          <Stack direction="row" spacing={2} sx={{ alignItems: 'center' }}>
            <span>
              {users.data.total === 0
                ? 'No users'
                : `${page * PAGE_SIZE + 1}–${page * PAGE_SIZE + users.data.users.length} of ${users.data.total}`}
            </span>
            <Button size="small" disabled={page === 0} onClick={() => setPage(page - 1)}>
              Previous page
            </Button>
            <Button size="small" disabled={(page + 1) * PAGE_SIZE >= users.data.total} onClick={() => setPage(page + 1)}>
              Next page
            </Button>
          </Stack>
        ) : null}
      </Stack>
    </Box>
  );
};

/** Shown while an admin is impersonating someone: who, and the way back. */
export const ImpersonationBanner = () => {
  const session = useQuery({
    queryKey: ['admin', 'impersonation'],
    queryFn: () =>
      authApi<{ session: { impersonatedBy?: string | null }; user: { name: string; email: string } } | null>('/get-session', undefined, {
        disableCookieCache: true,
      }),
  });
  if (!session.data?.session.impersonatedBy) return null;
  const { user } = session.data;
  const stop = async () => {
    await authApi('/admin/stop-impersonating', {});
    reloadAt('/admin/users')();
  };
  return (
    <Alert
      severity="warning"
      sx={{ mb: 1 }}
      action={
        <Button color="inherit" size="small" onClick={() => void stop()}>
          Stop impersonating
        </Button>
      }
    >
      Impersonating {user.name || user.email}
    </Alert>
  );
};
