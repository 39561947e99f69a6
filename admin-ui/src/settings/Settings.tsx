/**
 * Settings of the selected organization: profile and subscription settings (`PATCH /v1/organizations`),
 * members and their roles, invitations (send, resend, cancel) and teams (auth service organization API).
 */
import { useState, type FormEvent } from 'react';
import { ArrayInput, BooleanInput, Edit, SaveButton, SelectInput, SimpleForm, SimpleFormIterator, TextInput, Title, Toolbar, email, required, useNotify } from 'react-admin';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import {
  Alert,
  Box,
  Button,
  Card,
  CardContent,
  IconButton,
  MenuItem,
  Stack,
  Tab,
  Table,
  TableBody,
  TableCell,
  TableHead,
  TableRow,
  Tabs,
  TextField,
  Tooltip,
  Typography,
} from '@mui/material';
import DeleteIcon from '@mui/icons-material/Delete';
import { authApi } from '../common/api.ts';
import { formatDate } from '../common/money.tsx';
import { currentOrganizationId } from '../common/organization.ts';
import { StatusChip } from '../common/StatusChip.tsx';

const roles = [
  { id: 'member', name: 'Member' },
  { id: 'admin', name: 'Admin' },
  { id: 'owner', name: 'Owner' },
];

interface Member {
  id: string;
  role: string;
  createdAt: string;
  user: { id: string; name: string; email: string };
}
interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  expiresAt: string;
}
interface Team {
  id: string;
  name: string;
  createdAt: string;
}

function useAuthList<T>(key: string, path: string, pick: (body: any) => T[]) {
  const org = currentOrganizationId();
  return useQuery({ queryKey: ['settings', key, org], queryFn: async () => pick(await authApi(path, undefined, { organizationId: org })) });
}

function useAction() {
  const notify = useNotify();
  const queryClient = useQueryClient();
  return async (path: string, body: Record<string, unknown>, done: string) => {
    try {
      await authApi(path, { organizationId: currentOrganizationId(), ...body });
      notify(done, { type: 'info' });
      await queryClient.invalidateQueries({ queryKey: ['settings'] });
      return true;
    } catch (err) {
      notify(err instanceof Error ? err.message : 'That did not work', { type: 'error' });
      return false;
    }
  };
}

const socialPlatforms = [
  { id: 'x', name: 'X' },
  { id: 'github', name: 'GitHub' },
  { id: 'linkedin', name: 'LinkedIn' },
  { id: 'youtube', name: 'YouTube' },
  { id: 'instagram', name: 'Instagram' },
  { id: 'facebook', name: 'Facebook' },
  { id: 'tiktok', name: 'TikTok' },
  { id: 'other', name: 'Other' },
];

const Profile = () => (
  <Edit resource="organizations" id={currentOrganizationId()!} mutationMode="pessimistic" redirect={false} title=" " actions={false}>
    <SimpleForm toolbar={<Toolbar><SaveButton /></Toolbar>}>
      <Typography variant="h6" component="h2">
        Profile
      </Typography>
      <TextInput source="name" label="Name" validate={required()} fullWidth />
      <TextInput source="email" label="Support email" validate={email()} fullWidth />
      <TextInput source="website" label="Website" type="url" fullWidth />
      <TextInput source="avatar_url" label="Logo URL" type="url" fullWidth />
      <TextInput source="slug" label="Slug" readOnly helperText={false} />
      <ArrayInput source="socials" label="Social profiles">
        <SimpleFormIterator inline disableReordering>
          <SelectInput source="platform" label="Platform" choices={socialPlatforms} validate={required()} />
          <TextInput source="url" label="Profile URL" type="url" validate={required()} />
        </SimpleFormIterator>
      </ArrayInput>
      <Typography variant="h6" component="h2" sx={{ mt: 2 }}>
        Subscriptions
      </Typography>
      <BooleanInput source="subscription_settings.allow_multiple_subscriptions" label="Customers may hold several subscriptions" />
      <BooleanInput source="subscription_settings.allow_customer_updates" label="Customers may change plan from the portal" />
      <SelectInput
        source="subscription_settings.proration_behavior"
        label="On a plan change"
        choices={[
          { id: 'prorate', name: 'Prorate on the next invoice' },
          { id: 'invoice', name: 'Invoice the difference now' },
        ]}
      />
    </SimpleForm>
  </Edit>
);

const Members = () => {
  const { data, error } = useAuthList<Member>('members', '/organization/list-members', (b) => b.members ?? []);
  const act = useAction();
  if (error) return <Alert severity="error">{error.message}</Alert>;
  return (
    <Table size="small" aria-label="Members">
      <TableHead>
        <TableRow>
          <TableCell>Name</TableCell>
          <TableCell>Email</TableCell>
          <TableCell>Role</TableCell>
          <TableCell>Since</TableCell>
          <TableCell>Actions</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {(data ?? []).map((m) => (
          <TableRow key={m.id}>
            <TableCell>{m.user.name || '—'}</TableCell>
            <TableCell>{m.user.email}</TableCell>
            <TableCell>
              <TextField
                select
                size="small"
                value={m.role.split(',')[0]}
                label={`Role of ${m.user.email}`}
                onChange={(e) => void act('/organization/update-member-role', { memberId: m.id, role: e.target.value }, `${m.user.email} is now ${e.target.value}`)}
                sx={{ minWidth: 130 }}
              >
                {roles.map((r) => (
                  <MenuItem key={r.id} value={r.id}>
                    {r.name}
                  </MenuItem>
                ))}
              </TextField>
            </TableCell>
            <TableCell>{formatDate(m.createdAt, false)}</TableCell>
            <TableCell>
              <Tooltip title={`Remove ${m.user.email}`}>
                <IconButton aria-label={`Remove ${m.user.email}`} onClick={() => void act('/organization/remove-member', { memberIdOrEmail: m.id }, `${m.user.email} removed`)}>
                  <DeleteIcon />
                </IconButton>
              </Tooltip>
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
  );
};

const Invitations = () => {
  const { data, error } = useAuthList<Invitation>('invitations', '/organization/list-invitations', (b) => (Array.isArray(b) ? b : b.invitations ?? []));
  const act = useAction();
  const [emailValue, setEmail] = useState('');
  const [role, setRole] = useState('member');
  const send = async (e: FormEvent) => {
    e.preventDefault();
    if (await act('/organization/invite-member', { email: emailValue.trim(), role }, `Invitation sent to ${emailValue.trim()}`)) setEmail('');
  };
  return (
    <Stack spacing={2}>
      <Box component="form" onSubmit={(e) => void send(e)} sx={{ display: 'flex', gap: 2, flexWrap: 'wrap', alignItems: 'center' }}>
        <TextField size="small" type="email" label="Email to invite" value={emailValue} onChange={(e) => setEmail(e.target.value)} required />
        <TextField select size="small" label="Role" value={role} onChange={(e) => setRole(e.target.value)} sx={{ minWidth: 130 }}>
          {roles.map((r) => (
            <MenuItem key={r.id} value={r.id}>
              {r.name}
            </MenuItem>
          ))}
        </TextField>
        <Button type="submit" variant="contained" disabled={!emailValue.trim()}>
          Send invitation
        </Button>
      </Box>
      {error ? <Alert severity="error">{error.message}</Alert> : null}
      <Table size="small" aria-label="Invitations">
        <TableHead>
          <TableRow>
            <TableCell>Email</TableCell>
            <TableCell>Role</TableCell>
            <TableCell>Status</TableCell>
            <TableCell>Expires</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {(data ?? []).map((i) => (
            <TableRow key={i.id}>
              <TableCell>{i.email}</TableCell>
              <TableCell>{i.role}</TableCell>
              <TableCell>
                <StatusChip status={i.status} />
              </TableCell>
              <TableCell>{formatDate(i.expiresAt)}</TableCell>
              <TableCell>
                {i.status === 'pending' ? (
                  <>
                    <Button size="small" onClick={() => void act('/organization/invite-member', { email: i.email, role: i.role, resend: true }, `Invitation sent again to ${i.email}`)}>
                      Resend
                    </Button>
                    <Button size="small" color="error" onClick={() => void act('/organization/cancel-invitation', { invitationId: i.id }, 'Invitation cancelled')}>
                      Cancel
                    </Button>
                  </>
                ) : null}
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {data && !data.length ? <Typography variant="body2">No invitations.</Typography> : null}
    </Stack>
  );
};

const Teams = () => {
  const { data, error } = useAuthList<Team>('teams', '/organization/list-teams', (b) => (Array.isArray(b) ? b : b.teams ?? []));
  const act = useAction();
  const [name, setName] = useState('');
  const [editing, setEditing] = useState<{ id: string; name: string } | null>(null);
  return (
    <Stack spacing={2}>
      <Box
        component="form"
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          void act('/organization/create-team', { name: name.trim() }, `Team ${name.trim()} created`).then((ok) => ok && setName(''));
        }}
        sx={{ display: 'flex', gap: 2, alignItems: 'center', flexWrap: 'wrap' }}
      >
        <TextField size="small" label="New team name" value={name} onChange={(e) => setName(e.target.value)} required />
        <Button type="submit" variant="contained" disabled={!name.trim()}>
          Create team
        </Button>
      </Box>
      {error ? <Alert severity="error">{error.message}</Alert> : null}
      <Table size="small" aria-label="Teams">
        <TableHead>
          <TableRow>
            <TableCell>Name</TableCell>
            <TableCell>Created</TableCell>
            <TableCell>Actions</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {(data ?? []).map((t) => (
            <TableRow key={t.id}>
              <TableCell>
                {editing?.id === t.id ? (
                  <TextField size="small" label="Team name" value={editing.name} onChange={(e) => setEditing({ id: t.id, name: e.target.value })} />
                ) : (
                  t.name
                )}
              </TableCell>
              <TableCell>{formatDate(t.createdAt, false)}</TableCell>
              <TableCell>
                {editing?.id === t.id ? (
                  <Button size="small" onClick={() => void act('/organization/update-team', { teamId: t.id, data: { name: editing.name.trim() } }, 'Team renamed').then(() => setEditing(null))}>
                    Save
                  </Button>
                ) : (
                  <Button size="small" onClick={() => setEditing({ id: t.id, name: t.name })}>
                    Rename
                  </Button>
                )}
                <Button size="small" color="error" onClick={() => void act('/organization/remove-team', { teamId: t.id }, 'Team removed')}>
                  Remove
                </Button>
              </TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </Stack>
  );
};

export const Settings = () => {
  const [tab, setTab] = useState(0);
  return (
    <Box sx={{ py: 2 }}>
      <Title title="Settings" />
      <Tabs value={tab} onChange={(_, v: number) => setTab(v)} variant="scrollable" aria-label="Settings sections" sx={{ mb: 2 }}>
        <Tab label="Organization" />
        <Tab label="Members" />
        <Tab label="Invitations" />
        <Tab label="Teams" />
      </Tabs>
      {tab === 0 ? <Profile /> : (
        <Card>
          <CardContent>
            {tab === 1 ? <Members /> : tab === 2 ? <Invitations /> : <Teams />}
          </CardContent>
        </Card>
      )}
    </Box>
  );
};
