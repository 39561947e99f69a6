/**
 * The console's frame: app bar with the organization switcher, the menu, a banner while the email
 * address is unverified, and the organization gate (no organization yet → first-run page; the
 * selected organization keys the pages so switching reloads them with the new scope).
 */
import { Suspense, forwardRef, useEffect, useState, type ReactNode } from 'react';
import { Navigate, Link as RouterLink } from 'react-router-dom';
import {
  AppBar,
  Layout as RaLayout,
  Loading,
  LoadingIndicator,
  useLogout,
  TitlePortal,
  UserMenu,
  useGetIdentity,
  useGetList,
  useUserMenu,
  type LayoutProps,
} from 'react-admin';
import { Alert, Box, Button, ListItemIcon, ListItemText, MenuItem } from '@mui/material';
import ExitIcon from '@mui/icons-material/PowerSettingsNew';
import AccountIcon from '@mui/icons-material/ManageAccounts';
import AdminIcon from '@mui/icons-material/AdminPanelSettings';
import { authApi } from '../common/api.ts';
import { currentOrganizationId, setCurrentOrganizationId, subscribeOrganization } from '../common/organization.ts';
import { VERIFY_CALLBACK, signOut } from '../auth/authProvider.ts';
import { ImpersonationBanner, useIsAdmin } from '../admin/AdminUsers.tsx';
import { Menu } from './Menu.tsx';
import { OrganizationSwitcher, type Organization } from './OrganizationSwitcher.tsx';

/** Ends the server session, then react-admin's logout (clean-up and redirect to the sign-in page). */
const SignOut = forwardRef<HTMLLIElement>((_props, ref) => {
  const logout = useLogout();
  return (
    <MenuItem ref={ref} onClick={() => void signOut().then(() => logout())}>
      <ListItemIcon>
        <ExitIcon fontSize="small" />
      </ListItemIcon>
      <ListItemText>Sign out</ListItemText>
    </MenuItem>
  );
});

/** The person's own account page (two-factor, passkeys, linked providers, sessions). */
const AccountLink = forwardRef<HTMLAnchorElement>((_props, ref) => {
  const { onClose } = useUserMenu() ?? {};
  return (
    <MenuItem ref={ref} component={RouterLink} to="/account" onClick={onClose}>
      <ListItemIcon>
        <AccountIcon fontSize="small" />
      </ListItemIcon>
      <ListItemText>Your account</ListItemText>
    </MenuItem>
  );
});

/** The platform's users (admin section), for admins only. */
const AdminLink = forwardRef<HTMLAnchorElement>((_props, ref) => {
  const { onClose } = useUserMenu() ?? {};
  if (!useIsAdmin()) return null;
  return (
    <MenuItem ref={ref} component={RouterLink} to="/admin/users" onClick={onClose}>
      <ListItemIcon>
        <AdminIcon fontSize="small" />
      </ListItemIcon>
      <ListItemText>Users (admin)</ListItemText>
    </MenuItem>
  );
});

// The user button shows the person's name; its accessible name is that name too (not "Profile").
const ConsoleUserMenu = () => {
  const { identity } = useGetIdentity();
  return (
    <UserMenu label={identity?.fullName ?? 'Account'}>
      <AccountLink />
      <AdminLink />
      <SignOut />
    </UserMenu>
  );
};

const ConsoleAppBar = () => (
  <AppBar userMenu={<ConsoleUserMenu />} toolbar={<LoadingIndicator aria-label="Loading" />}>
    <TitlePortal />
    <OrganizationSwitcher />
  </AppBar>
);

const VerifyEmailBanner = () => {
  const { identity } = useGetIdentity();
  const [sent, setSent] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!identity || identity.emailVerified !== false) return null;
  const resend = async () => {
    try {
      await authApi('/send-verification-email', { email: identity.email, callbackURL: VERIFY_CALLBACK });
      setSent(true);
    } catch (err) {
      setError(err instanceof Error ? err.message : 'Could not send the mail');
    }
  };
  return (
    <Alert
      severity={error ? 'error' : 'info'}
      sx={{ mb: 1, '& .MuiAlert-message': { minWidth: 0, overflowWrap: 'anywhere' } }}
      action={
        sent ? undefined : (
          <Button color="inherit" size="small" onClick={() => void resend()}>
            Send the link again
          </Button>
        )
      }
    >
      {error ?? (sent ? `A verification link is on its way to ${String(identity.email)}.` : `Please verify your email address (${String(identity.email)}): open the link we mailed you.`)}
    </Alert>
  );
};

export function useCurrentOrganizationId(): string | null {
  const [id, setId] = useState(currentOrganizationId());
  useEffect(() => subscribeOrganization(setId), []);
  return id;
}

/** Renders the pages once an organization is selected; sends a user without one to the first-run page. */
const OrganizationGate = ({ children }: { children: ReactNode }) => {
  const selected = useCurrentOrganizationId();
  const { data, isPending, error } = useGetList<Organization>('organizations', {
    pagination: { page: 1, perPage: 100 },
    sort: { field: 'name', order: 'ASC' },
  });
  const valid = !!data && data.some((o) => o.id === selected);
  useEffect(() => {
    if (data && data.length && !valid) setCurrentOrganizationId(data[0]!.id);
  }, [data, valid]);
  if (error) return <Alert severity="error">Could not load your organizations: {error.message}</Alert>;
  if (isPending) return <Loading />;
  if (!data.length) return <Navigate to="/welcome" replace />;
  if (!valid) return <Loading />;
  return <Box key={selected}>{children}</Box>;
};

export const Layout = ({ children }: LayoutProps) => (
  <RaLayout appBar={ConsoleAppBar} menu={Menu}>
    <ImpersonationBanner />
    <VerifyEmailBanner />
    <OrganizationGate>
      <Suspense fallback={<Loading />}>{children}</Suspense>
    </OrganizationGate>
  </RaLayout>
);
