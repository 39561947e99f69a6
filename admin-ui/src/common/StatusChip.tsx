import { Chip } from '@mui/material';
import { useRecordContext } from 'react-admin';

const tones: Record<string, 'success' | 'warning' | 'error' | 'default' | 'info'> = {
  active: 'success', paid: 'success', succeeded: 'success', granted: 'success', trialing: 'info', open: 'info',
  confirmed: 'info', pending: 'warning', past_due: 'warning', partially_refunded: 'warning', incomplete: 'warning',
  canceled: 'default', expired: 'default', refunded: 'default', revoked: 'error', failed: 'error', disabled: 'default',
  unpaid: 'error', incomplete_expired: 'default',
};

/** A status word with a colour; the word itself carries the meaning. */
export const StatusChip = ({ status }: { status: string | null | undefined }) =>
  status ? <Chip size="small" label={status.replace(/_/g, ' ')} color={tones[status] ?? 'default'} variant="outlined" /> : null;

export const StatusField = ({ source = 'status' }: { source?: string; label?: string }) => {
  const record = useRecordContext();
  return <StatusChip status={record?.[source] as string | undefined} />;
};
