/**
 * "Open in Temporal": links a record to its workflow runs in the Temporal Web UI, for the selected
 * organization's owners and admins only. Where the UI is and how its links are built comes from
 * `GET /v1/operations/temporal`; workflow ids and search attributes per record: docs/operations.md.
 */
import { useQuery } from '@tanstack/react-query';
import { useGetIdentity } from 'react-admin';
import { Button } from '@mui/material';
import OpenInNewIcon from '@mui/icons-material/OpenInNew';
import { api, authApi } from './api.ts';
import { currentOrganizationId } from './organization.ts';

interface TemporalLinks {
  ui_url: string;
  namespace: string;
  workflow_url_template: string;
  query_url_template: string;
}

/** Whether the signed-in user is an owner or admin of the selected organization. */
export function useIsOrganizationAdmin(): boolean {
  const { identity } = useGetIdentity();
  const org = currentOrganizationId();
  const { data } = useQuery({
    queryKey: ['my-role', org, identity?.id],
    enabled: !!org && !!identity,
    staleTime: 60_000,
    queryFn: async () => {
      const body = await authApi<{ members: { userId?: string; user?: { id: string }; role: string }[] }>('/organization/list-members', undefined, { organizationId: org });
      const me = body.members.find((m) => (m.userId ?? m.user?.id) === identity!.id);
      return me ? me.role.split(',').map((r) => r.trim()) : [];
    },
  });
  return !!data && (data.includes('owner') || data.includes('admin'));
}

/** The selected organization's links: its visibility queries find only its runs. */
export function useTemporalLinks(enabled = true): TemporalLinks | undefined {
  const org = currentOrganizationId();
  return useQuery({
    queryKey: ['operations-temporal', org],
    enabled: enabled && !!org,
    staleTime: Infinity,
    queryFn: () => api<TemporalLinks>(`/v1/operations/temporal?organization_id=${encodeURIComponent(org!)}`),
  }).data;
}

/** A visibility query matching any of `attributes` (`{ OrderId: id, CheckoutId: null }` → `OrderId = "id"`). */
export function anyOf(attributes: Record<string, string | null | undefined>): string {
  return Object.entries(attributes)
    .filter(([, v]) => !!v)
    .map(([k, v]) => `${k} = "${String(v).replace(/["\\]/g, '')}"`)
    .join(' OR ');
}

/**
 * A link to one run (`workflowId`) or to the runs a visibility query finds (`query`); nothing for
 * members who are not admins, or while the links are loading.
 */
export const OpenInTemporal = ({ workflowId, query, label = 'Open in Temporal' }: { workflowId?: string; query?: string; label?: string }) => {
  const admin = useIsOrganizationAdmin();
  const links = useTemporalLinks(admin);
  if (!admin || !links || (!workflowId && !query)) return null;
  const href = workflowId
    ? links.workflow_url_template.replace('{workflow_id}', encodeURIComponent(workflowId))
    : links.query_url_template.replace('{query}', encodeURIComponent(query!));
  return (
    <Button size="small" component="a" href={href} target="_blank" rel="noopener noreferrer" startIcon={<OpenInNewIcon />} onClick={(e: React.MouseEvent) => e.stopPropagation()}>
      {label}
    </Button>
  );
};
