import { Chip } from '@mui/material';
import { useRecordContext } from 'react-admin';

const tones: Record<string, 'success' | 'warning' | 'error' | 'default' | 'info'> = {
  active: 'success', paid: 'success', succeeded: 'success', granted: 'success', trialing: 'info', open: 'info',
  confirmed: 'info', pending: 'warning', past_due: 'warning', partially_refunded: 'warning', incomplete: 'warning',
  canceled: 'default', expired: 'default', refunded: 'default', revoked: 'error', failed: 'error', disabled: 'default',
  unpaid: 'error', incomplete_expired: 'default',
};

/** Text colours of each tone with at least 4.5:1 contrast on white. */
const ink = { success: '#1b5e20', info: '#01579b', warning: '#8a4500', error: '#b71c1c', default: 'rgba(0, 0, 0, 0.75)' };

/** A status word with a colour; the word itself carries the meaning. */
export const StatusChip = ({ status }: { status: string | null | undefined }) => {
  if (!status) return null;
  const tone = tones[status] ?? 'default';
  return <Chip size="small" label={status.replace(/_/g, ' ')} variant="outlined" sx={{ color: ink[tone], borderColor: ink[tone] }} />;
};

export const StatusField = ({ source = 'status' }: { source?: string; label?: string }) => {
  const record = useRecordContext();
  return <StatusChip status={record?.[source] as string | undefined} />;
};
