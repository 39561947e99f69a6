/**
 * Refund an order: the amount is pre-filled with what is still refundable (net amount minus the
 * refunds not failed or canceled), with a reason and "revoke benefits"; the API's refusals are shown
 * as sentences in the dialog.
 */
import { useState } from 'react';
import { useNotify, useRefresh } from 'react-admin';
import { useQueryClient } from '@tanstack/react-query';
import {
  Alert,
  Button,
  Checkbox,
  Dialog,
  DialogActions,
  DialogContent,
  DialogTitle,
  FormControlLabel,
  MenuItem,
  Stack,
  TextField,
} from '@mui/material';
import { api } from '../../common/api.ts';
import { refundReasons } from '../../common/choices.ts';
import { formatMoney, toMajor, toMinor } from '../../common/money.tsx';
import type { Order } from './types.ts';

function readable(err: unknown, refundable: number, currency: string): string {
  const body = (err as { body?: { error?: string } }).body;
  switch (body?.error) {
    case 'RefundAmountTooHigh':
      return `That is more than can be refunded: at most ${formatMoney(refundable, currency)} remains.`;
    case 'RefundedAlready':
      return 'This order is already fully refunded.';
    default:
      return err instanceof Error ? err.message : 'The refund failed.';
  }
}

export const RefundDialog = ({ order, refundable, open, onClose }: { order: Order; refundable: number; open: boolean; onClose: () => void }) => {
  const notify = useNotify();
  const refresh = useRefresh();
  const queryClient = useQueryClient();
  const [amount, setAmount] = useState(String(toMajor(refundable, order.currency) ?? ''));
  const [reason, setReason] = useState('customer_request');
  const [comment, setComment] = useState('');
  const [revoke, setRevoke] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async () => {
    setBusy(true);
    setError(null);
    try {
      await api('/v1/refunds/', {
        body: {
          order_id: order.id,
          amount: toMinor(amount, order.currency),
          reason,
          comment: comment.trim() || null,
          revoke_benefits: revoke,
        },
      });
      notify(`Refund of ${formatMoney(toMinor(amount, order.currency), order.currency)} requested`, { type: 'info' });
      await queryClient.invalidateQueries({ queryKey: ['refunds'] });
      refresh();
      onClose();
    } catch (err) {
      setError(readable(err, refundable, order.currency));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={open} onClose={onClose} aria-labelledby="refund-title" fullWidth maxWidth="xs">
      <DialogTitle id="refund-title">Refund order</DialogTitle>
      <DialogContent>
        <Stack spacing={2} sx={{ pt: 1 }}>
          {error ? (
            <Alert severity="error" role="alert">
              {error}
            </Alert>
          ) : null}
          <TextField
            label={`Amount (${order.currency.toUpperCase()})`}
            type="number"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
            helperText={`Refundable: ${formatMoney(refundable, order.currency)} (tax is refunded in proportion)`}
            slotProps={{ htmlInput: { step: '0.01', min: 0 } }}
          />
          <TextField select label="Reason" value={reason} onChange={(e) => setReason(e.target.value)}>
            {refundReasons.map((r) => (
              <MenuItem key={r.id} value={r.id}>
                {r.name}
              </MenuItem>
            ))}
          </TextField>
          <TextField label="Comment (optional)" value={comment} onChange={(e) => setComment(e.target.value)} multiline minRows={2} />
          <FormControlLabel
            control={<Checkbox checked={revoke} onChange={(e) => setRevoke(e.target.checked)} disabled={!!order.subscription_id} />}
            label={order.subscription_id ? 'Revoke benefits (not for subscription orders: cancel the subscription instead)' : 'Revoke the benefits of this order'}
          />
        </Stack>
      </DialogContent>
      <DialogActions>
        <Button onClick={onClose}>Cancel</Button>
        <Button variant="contained" color="error" onClick={() => void submit()} disabled={busy || !amount}>
          Refund
        </Button>
      </DialogActions>
    </Dialog>
  );
};
