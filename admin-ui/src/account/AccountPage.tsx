/**
 * The signed-in person's own account (route `/account`, from the user menu): profile, two-factor
 * authentication, passkeys, linked sign-in providers and the sessions signed in with this account.
 * Each section is its own component; the page only orders them.
 */
import { Title, useGetIdentity } from 'react-admin';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { Alert, Box, Button, Stack, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { authApi } from '../common/api.ts';
import { formatDate } from '../common/money.tsx';
import { AccountSection } from './AccountSection.tsx';
import { TwoFactorSection } from './TwoFactorSection.tsx';
import { LinkedAccountsSection } from './LinkedAccounts.tsx';
import { PasskeysSection } from './Passkeys.tsx';

const ProfileSection = () => {
  const { identity } = useGetIdentity();
  return (
    <AccountSection title="Profile" id="profile">
      <Typography>{identity?.fullName}</Typography>
      <Typography color="text.secondary">{identity?.email as string | undefined}</Typography>
    </AccountSection>
  );
};

interface SessionRow {
  id: string;
  token: string;
  createdAt: string;
  expiresAt: string;
  userAgent?: string | null;
  ipAddress?: string | null;
}

/** The sessions of this account; any but the current one can be signed out. */
const SessionsSection = () => {
  const client = useQueryClient();
  const current = useQuery({
    queryKey: ['account', 'session'],
    queryFn: () => authApi<{ session: { id: string } } | null>('/get-session', undefined, { disableCookieCache: true }),
  });
  const sessions = useQuery({ queryKey: ['account', 'sessions'], queryFn: () => authApi<SessionRow[]>('/list-sessions') });
  const revoke = async (token: string) => {
    await authApi('/revoke-session', { token });
    await client.invalidateQueries({ queryKey: ['account', 'sessions'] });
  };
  const currentId = current.data?.session.id;
  return (
    <AccountSection title="Sessions" id="sessions">
      {sessions.error ? <Alert severity="error">{sessions.error.message}</Alert> : null}
      <Box sx={{ overflowX: 'auto' }}>
        <Table size="small" aria-label="Sessions">
          <TableHead>
            <TableRow>
              <TableCell>Device</TableCell>
              <TableCell>Signed in</TableCell>
              <TableCell>Expires</TableCell>
              <TableCell />
            </TableRow>
          </TableHead>
          <TableBody>
            {(sessions.data ?? []).map((s) => (
              <TableRow key={s.id}>
                <TableCell sx={{ maxWidth: 260, overflowWrap: 'anywhere' }}>{s.userAgent || 'Unknown device'}</TableCell>
                <TableCell>{formatDate(s.createdAt)}</TableCell>
                <TableCell>{formatDate(s.expiresAt)}</TableCell>
                <TableCell align="right">
                  {s.id === currentId ? (
                    <Typography variant="body2" color="text.secondary">
                      This session
                    </Typography>
                  ) : (
                    <Button size="small" color="error" onClick={() => void revoke(s.token)} aria-label={`Sign out session from ${formatDate(s.createdAt)}`}>
                      Sign out
                    </Button>
                  )}
                </TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
    </AccountSection>
  );
};

export const AccountPage = () => (
  <Box sx={{ maxWidth: 880, mt: 2 }}>
    <Title title="Your account" />
    <Stack spacing={2}>
      <ProfileSection />
      <TwoFactorSection />
      <PasskeysSection />
      <LinkedAccountsSection />
      <SessionsSection />
    </Stack>
  </Box>
);
