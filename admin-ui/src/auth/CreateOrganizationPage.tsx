/**
 * First run (`#/welcome`): a signed-in user without an organization names theirs; also reached from the
 * switcher's "New organization". The slug follows the name until edited.
 */
import { useState, type FormEvent } from 'react';
import { useLocation, useNavigate } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { Alert, Button, Stack, TextField } from '@mui/material';
import { api } from '../common/api.ts';
import { setCurrentOrganizationId } from '../common/organization.ts';
import { AuthCard } from './AuthCard.tsx';

export const slugify = (name: string) =>
  name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^\w\s-]/g, '')
    .trim()
    .replace(/[\s_]+/g, '-')
    .replace(/-+/g, '-')
    .slice(0, 60);

export const CreateOrganizationPage = () => {
  const navigate = useNavigate();
  const another = new URLSearchParams(useLocation().search).has('another');
  const queryClient = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState<string | null>(null);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      const org = await api<{ id: string }>('/v1/organizations/', { body: { name: name.trim(), slug: slug ?? slugify(name) } });
      setCurrentOrganizationId(org.id);
      queryClient.removeQueries();
      navigate('/');
    } catch (err) {
      const body = (err as { body?: { errors?: Record<string, unknown> } }).body;
      const fieldErrors = Object.fromEntries(
        Object.entries(body?.errors ?? {}).filter(([k]) => k !== 'root').map(([k, v]) => [k, String(v)]),
      );
      setErrors({ ...fieldErrors, form: err instanceof Error ? err.message : 'Could not create the organization' });
      setBusy(false);
    }
  };

  return (
    <AuthCard
      title={another ? 'Create another organization' : 'Create your organization'}
      subtitle="An organization holds your products, customers and payouts. You can invite your team later."
    >
      <form onSubmit={(e) => void submit(e)} noValidate>
        <Stack spacing={2}>
          {errors.form ? (
            <Alert severity="error" role="alert">
              {errors.form}
            </Alert>
          ) : null}
          <TextField
            label="Organization name"
            name="name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            error={!!errors.name}
            helperText={errors.name}
            required
            autoFocus
            fullWidth
          />
          <TextField
            label="Slug"
            name="slug"
            value={slug ?? slugify(name)}
            onChange={(e) => setSlug(e.target.value)}
            error={!!errors.slug}
            helperText={errors.slug ?? 'Used in your public checkout and portal addresses'}
            required
            fullWidth
          />
          <Button type="submit" variant="contained" size="large" disabled={busy || !name.trim()}>
            Create organization
          </Button>
          {another ? <Button onClick={() => navigate(-1)}>Cancel</Button> : null}
        </Stack>
      </form>
    </AuthCard>
  );
};
