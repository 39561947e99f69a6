/** A benefit, its settings, and its grants (who holds it, since when, revoked or not). */
import { DeleteButton, EditButton, FunctionField, Labeled, Show, SimpleShowLayout, TextField, TopToolbar, useRecordContext } from 'react-admin';
import { Link } from 'react-router-dom';
import { ApiTable } from '../../common/ApiTable.tsx';
import { benefitTypeName } from '../../common/choices.ts';
import { DateTimeField, formatDate } from '../../common/money.tsx';
import { StatusChip } from '../../common/StatusChip.tsx';

interface Grant {
  id: string;
  granted_at: string | null;
  revoked_at: string | null;
  is_granted: boolean;
  is_revoked: boolean;
  customer_id: string;
  customer: { email: string; name: string | null };
  order_id: string | null;
  subscription_id: string | null;
  properties: Record<string, unknown>;
}

const describe = (type: string, p: Record<string, any>): string => {
  switch (type) {
    case 'custom':
      return p.note || 'No note';
    case 'license_keys':
      return [
        p.prefix ? `Prefix ${p.prefix}` : 'No prefix',
        p.expires ? `expires after ${p.expires.ttl} ${p.expires.timeframe}(s)` : 'never expires',
        p.activations ? `${p.activations.limit} activation(s)` : 'no activations',
        p.limit_usage ? `usage limit ${p.limit_usage}` : 'unlimited usage',
      ].join(', ');
    case 'downloadables':
      return `${(p.active_files ?? p.files ?? []).length} file(s)`;
    case 'meter_credit':
      return `${p.units} units${p.rollover ? ', rolling over' : ''}`;
    case 'github_repository':
      return `${p.repository_owner}/${p.repository_name} (${p.permission})`;
    case 'discord':
      return `Role ${p.role_id}${p.guild_id ? ` on server ${p.guild_id}` : ''}`;
    default:
      return JSON.stringify(p);
  }
};

const Grants = () => {
  const benefit = useRecordContext();
  if (!benefit) return null;
  return (
    <ApiTable<Grant>
      path={`/v1/benefits/${benefit.id}/grants`}
      caption="Grants"
      empty="Nobody holds this benefit yet."
      columns={[
        { label: 'Customer', render: (g) => <Link to={`/customers/${g.customer_id}/show`}>{g.customer?.email ?? g.customer_id}</Link> },
        { label: 'Status', render: (g) => <StatusChip status={g.is_revoked ? 'revoked' : g.is_granted ? 'granted' : 'pending'} /> },
        { label: 'Granted', render: (g) => formatDate(g.granted_at) },
        { label: 'Revoked', render: (g) => formatDate(g.revoked_at) },
        { label: 'From', render: (g) => (g.order_id ? <Link to={`/orders/${g.order_id}/show`}>Order</Link> : g.subscription_id ? <Link to={`/subscriptions/${g.subscription_id}/show`}>Subscription</Link> : '—') },
      ]}
    />
  );
};

export const BenefitShow = () => (
  <Show
    actions={
      <TopToolbar>
        <EditButton />
        <DeleteButton mutationMode="pessimistic" />
      </TopToolbar>
    }
  >
    <SimpleShowLayout>
      <TextField source="description" />
      <FunctionField label="Type" render={(r: { type: string }) => benefitTypeName(r.type)} />
      <FunctionField label="Settings" render={(r: { type: string; properties: Record<string, unknown> }) => describe(r.type, r.properties)} />
      <DateTimeField source="created_at" label="Created" />
      <Labeled label="Grants" fullWidth>
        <Grants />
      </Labeled>
    </SimpleShowLayout>
  </Show>
);
