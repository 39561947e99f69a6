/** The app bar's organization picker: every page shows the selected organization's records. */
import { useGetList } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { useQueryClient } from '@tanstack/react-query';
import { MenuItem, TextField } from '@mui/material';
import { setCurrentOrganizationId } from '../common/organization.ts';
import { useCurrentOrganizationId } from './Layout.tsx';

export interface Organization {
  id: string;
  name: string;
  slug: string;
}

const NEW = '__new__';

export const OrganizationSwitcher = () => {
  const selected = useCurrentOrganizationId();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const { data } = useGetList<Organization>('organizations', {
    pagination: { page: 1, perPage: 100 },
    sort: { field: 'name', order: 'ASC' },
  });
  if (!data?.length || !selected) return null;
  return (
    <TextField
      select
      size="small"
      label="Organization"
      value={data.some((o) => o.id === selected) ? selected : ''}
      onChange={(e) => {
        if (e.target.value === NEW) {
          navigate('/welcome?another=1');
          return;
        }
        setCurrentOrganizationId(e.target.value);
        queryClient.removeQueries({ predicate: (q) => q.queryKey[0] !== 'organizations' && q.queryKey[0] !== 'auth' });
        navigate('/');
      }}
      sx={{
        minWidth: { xs: 120, sm: 200 },
        maxWidth: { xs: 150, sm: 280 },
        mx: 1,
        '& .MuiInputBase-root': { color: 'inherit', bgcolor: 'rgba(255,255,255,0.12)' },
        '& .MuiInputLabel-root, & .MuiSvgIcon-root': { color: 'inherit' },
        '& .MuiInputLabel-root.Mui-focused': { color: 'inherit' },
      }}
    >
      {data.map((o) => (
        <MenuItem key={o.id} value={o.id}>
          {o.name}
        </MenuItem>
      ))}
      <MenuItem value={NEW}>+ New organization</MenuItem>
    </TextField>
  );
};
