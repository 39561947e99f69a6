/**
 * The dashboard: the metrics of GET /v1/metrics/ as charts over a chosen range and interval
 * (default: the last 30 days by day), checkouts and their conversion over the same range, and the
 * latest orders. Totals: sums for flows (revenue, orders), the last period for stocks (MRR, active).
 */
import { useMemo, useState } from 'react';
import { Title, useGetList } from 'react-admin';
import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router-dom';
import {
  Alert,
  Box,
  Card,
  CardContent,
  Grid,
  MenuItem,
  Stack,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TableRow,
  TextField,
  Typography,
} from '@mui/material';
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { api } from '../common/api.ts';
import { formatDate, formatMoney } from '../common/money.tsx';
import { currentOrganizationId } from '../common/organization.ts';
import { StatusChip } from '../common/StatusChip.tsx';

type Interval = 'hour' | 'day' | 'week' | 'month' | 'year';

interface Period {
  timestamp: string;
  orders: number;
  revenue: number;
  cumulative_revenue: number;
  average_order_value: number;
  one_time_products: number;
  one_time_products_revenue: number;
  new_subscriptions: number;
  new_subscriptions_revenue: number;
  renewed_subscriptions: number;
  renewed_subscriptions_revenue: number;
  active_subscriptions: number;
  monthly_recurring_revenue: number;
}

interface Metrics {
  periods: Period[];
}

/**
 * The currency the totals are in: the one of the organization's recent orders (the metrics API sums
 * amounts as they are). More than one: the most frequent, and the dashboard says totals mix them.
 */
function useDashboardCurrency(): { currency: string; mixed: string[] } {
  const { data } = useGetList<{ id: string; currency: string }>('orders', { pagination: { page: 1, perPage: 100 }, sort: { field: 'created_at', order: 'DESC' } });
  return useMemo(() => {
    const counts = new Map<string, number>();
    for (const o of data ?? []) counts.set(o.currency.toLowerCase(), (counts.get(o.currency.toLowerCase()) ?? 0) + 1);
    const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([c]) => c);
    return { currency: ranked[0] ?? 'usd', mixed: ranked.length > 1 ? ranked.map((c) => c.toUpperCase()) : [] };
  }, [data]);
}
const isoDay = (d: Date) => `${d.getFullYear()}-${String(d.getMonth() + 1).padStart(2, '0')}-${String(d.getDate()).padStart(2, '0')}`;
const daysAgo = (n: number) => {
  const d = new Date();
  d.setDate(d.getDate() - n);
  return isoDay(d);
};

function tick(interval: Interval) {
  return (ts: string) => {
    const d = new Date(ts);
    switch (interval) {
      case 'hour':
        return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
      case 'month':
        return d.toLocaleDateString(undefined, { month: 'short', year: '2-digit' });
      case 'year':
        return String(d.getFullYear());
      default:
        return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
    }
  };
}

const Kpi = ({ label, value }: { label: string; value: string }) => (
  <Card variant="outlined" sx={{ height: '100%' }}>
    <CardContent>
      <Typography variant="body2" component="h3" sx={{ color: 'text.secondary' }}>
        {label}
      </Typography>
      <Typography variant="h5" component="p" sx={{ fontVariantNumeric: 'tabular-nums' }}>
        {value}
      </Typography>
    </CardContent>
  </Card>
);

const ChartCard = ({ title, children }: { title: string; children: React.ReactElement }) => (
  <Card variant="outlined">
    <CardContent>
      <Typography variant="subtitle1" component="h2" gutterBottom>
        {title}
      </Typography>
      <Box role="img" aria-label={`${title} chart`} sx={{ width: '100%', height: 240 }}>
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </Box>
    </CardContent>
  </Card>
);

/** Checkouts created in the range (newest first, at most 500) and how many succeeded. */
function useCheckoutConversion(start: string, end: string) {
  return useQuery({
    queryKey: ['dashboard-checkouts', currentOrganizationId(), start, end],
    queryFn: async () => {
      const from = new Date(`${start}T00:00:00`).getTime();
      const to = new Date(`${end}T23:59:59.999`).getTime();
      let total = 0;
      let succeeded = 0;
      for (let page = 1; page <= 5; page++) {
        const res = await api<{ items: { status: string; created_at: string }[]; pagination: { max_page: number } }>('/v1/checkouts/', {
          query: { organization_id: currentOrganizationId(), page, limit: 100, sorting: '-created_at' },
        });
        let older = false;
        for (const c of res.items) {
          const t = new Date(c.created_at).getTime();
          if (t < from) {
            older = true;
            continue;
          }
          if (t > to) continue;
          total++;
          if (c.status === 'succeeded') succeeded++;
        }
        if (older || page >= res.pagination.max_page) break;
      }
      return { total, succeeded };
    },
  });
}

const LatestOrders = () => {
  const { data, isPending } = useGetList<{
    id: string;
    created_at: string;
    amount: number;
    currency: string;
    status: string;
    customer: { email: string };
    product: { name: string };
  }>('orders', { pagination: { page: 1, perPage: 5 }, sort: { field: 'created_at', order: 'DESC' } });
  if (isPending) return null;
  if (!data?.length) return <Typography variant="body2">No orders yet. Share a checkout link to make your first sale.</Typography>;
  return (
    // Fits its half-width card: the day only (the order's page has the time), long emails and product
    // names wrap, and amount and status never do; a table still too wide scrolls inside the card.
    <TableContainer>
    <Table size="small" aria-label="Latest orders" sx={{ '& th, & td': { px: 1 } }}>
      <TableHead>
        <TableRow>
          <TableCell>Date</TableCell>
          <TableCell>Customer</TableCell>
          <TableCell>Product</TableCell>
          <TableCell align="right">Amount</TableCell>
          <TableCell>Status</TableCell>
        </TableRow>
      </TableHead>
      <TableBody>
        {data.map((o) => (
          <TableRow key={o.id} hover>
            <TableCell>
              <Link to={`/orders/${o.id}/show`}>{formatDate(o.created_at, false)}</Link>
            </TableCell>
            <TableCell sx={{ overflowWrap: 'anywhere' }}>{o.customer.email}</TableCell>
            <TableCell sx={{ overflowWrap: 'anywhere' }}>{o.product.name}</TableCell>
            <TableCell align="right" sx={{ whiteSpace: 'nowrap' }}>{formatMoney(o.amount, o.currency)}</TableCell>
            <TableCell sx={{ whiteSpace: 'nowrap' }}>
              <StatusChip status={o.status} />
            </TableCell>
          </TableRow>
        ))}
      </TableBody>
    </Table>
    </TableContainer>
  );
};

export const Dashboard = () => {
  const [interval, setInterval] = useState<Interval>('day');
  const [start, setStart] = useState(daysAgo(29));
  const [end, setEnd] = useState(isoDay(new Date()));
  const timezone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const metrics = useQuery({
    queryKey: ['metrics', currentOrganizationId(), start, end, interval],
    queryFn: () =>
      api<Metrics>('/v1/metrics/', {
        query: { organization_id: currentOrganizationId(), start_date: start, end_date: end, interval, timezone },
      }),
  });
  const checkouts = useCheckoutConversion(start, end);
  const periods = useMemo(() => metrics.data?.periods ?? [], [metrics.data]);
  const sum = (k: keyof Period) => periods.reduce((s, p) => s + (p[k] as number), 0);
  const last = (k: keyof Period) => (periods.length ? (periods[periods.length - 1]![k] as number) : 0);
  const revenue = sum('revenue');
  const orders = sum('orders');
  const { currency, mixed } = useDashboardCurrency();
  const money = (v: number) => formatMoney(v, currency);
  const fmtTick = tick(interval);
  const chartData = periods.map((p) => ({ ...p, label: fmtTick(p.timestamp) }));
  const axisMoney = (v: number) => formatMoney(v, currency).replace(/\.00$/, '');
  // Money axes span at least 4 whole units: a series of zeros (no subscriptions yet) would otherwise
  // get ticks of a cent each (USD 0.01 … 0.04).
  const moneyDomain: [(min: number) => number, (max: number) => number] = [(min) => Math.min(0, min), (max) => Math.max(max, 400)];

  return (
    <Box sx={{ py: 2 }}>
      <Title title="Dashboard" />
      <Stack direction={{ xs: 'column', sm: 'row' }} spacing={2} sx={{ mb: 2 }}>
        <TextField select size="small" label="Interval" value={interval} onChange={(e) => setInterval(e.target.value as Interval)} sx={{ minWidth: 140 }}>
          {(['hour', 'day', 'week', 'month', 'year'] as const).map((i) => (
            <MenuItem key={i} value={i}>
              By {i}
            </MenuItem>
          ))}
        </TextField>
        <TextField size="small" type="date" label="From" value={start} onChange={(e) => e.target.value && setStart(e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
        <TextField size="small" type="date" label="To" value={end} onChange={(e) => e.target.value && setEnd(e.target.value)} slotProps={{ inputLabel: { shrink: true } }} />
      </Stack>
      {mixed.length ? (
        <Alert severity="info" sx={{ mb: 2 }}>
          Your orders are in several currencies ({mixed.join(', ')}); totals add their amounts as they are and are shown in {mixed[0]}.
        </Alert>
      ) : null}
      {metrics.error ? (
        <Alert severity="error" sx={{ mb: 2 }}>
          {metrics.error.message}
        </Alert>
      ) : null}
      <Grid container spacing={2} sx={{ mb: 2 }}>
        {[
          ['Revenue', money(revenue)],
          ['Orders', String(orders)],
          ['Average order value', money(orders ? Math.round(revenue / orders) : 0)],
          ['Monthly recurring revenue', money(last('monthly_recurring_revenue'))],
          ['Active subscriptions', String(last('active_subscriptions'))],
          ['New subscriptions', String(sum('new_subscriptions'))],
          ['Renewals', String(sum('renewed_subscriptions'))],
          ['Checkouts', checkouts.data ? String(checkouts.data.total) : '…'],
          [
            'Checkout conversion',
            checkouts.data ? (checkouts.data.total ? `${Math.round((checkouts.data.succeeded / checkouts.data.total) * 100)}%` : '—') : '…',
          ],
        ].map(([label, value]) => (
          <Grid key={label} size={{ xs: 6, md: 4, lg: 2 }}>
            <Kpi label={label!} value={value!} />
          </Grid>
        ))}
      </Grid>
      <Grid container spacing={2}>
        <Grid size={{ xs: 12, lg: 6 }}>
          <ChartCard title="Revenue">
            <AreaChart data={chartData}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="label" />
              <YAxis tickFormatter={axisMoney} width={80} domain={moneyDomain} />
              <Tooltip formatter={(v) => money(Number(v))} />
              <Area isAnimationActive={false} type="monotone" dataKey="revenue" name="Revenue" stroke="#3949ab" fill="#c5cae9" />
            </AreaChart>
          </ChartCard>
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <ChartCard title="Orders">
            <BarChart data={chartData}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="label" />
              <YAxis allowDecimals={false} />
              <Tooltip />
              <Bar isAnimationActive={false} dataKey="orders" name="Orders" fill="#3949ab" />
            </BarChart>
          </ChartCard>
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <ChartCard title="Average order value">
            <LineChart data={chartData}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="label" />
              <YAxis tickFormatter={axisMoney} width={80} domain={moneyDomain} />
              <Tooltip formatter={(v) => money(Number(v))} />
              <Line isAnimationActive={false} type="monotone" dataKey="average_order_value" name="Average order value" stroke="#00796b" dot={false} />
            </LineChart>
          </ChartCard>
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <ChartCard title="Monthly recurring revenue">
            <LineChart data={chartData}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="label" />
              <YAxis tickFormatter={axisMoney} width={80} domain={moneyDomain} />
              <Tooltip formatter={(v) => money(Number(v))} />
              <Line isAnimationActive={false} type="monotone" dataKey="monthly_recurring_revenue" name="MRR" stroke="#6a1b9a" dot={false} />
            </LineChart>
          </ChartCard>
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <ChartCard title="Subscriptions">
            <LineChart data={chartData}>
              <CartesianGrid strokeDasharray="3 3" />
              <XAxis dataKey="label" />
              <YAxis allowDecimals={false} />
              <Tooltip />
              <Legend />
              <Line isAnimationActive={false} type="monotone" dataKey="active_subscriptions" name="Active" stroke="#3949ab" dot={false} />
              <Line isAnimationActive={false} type="monotone" dataKey="new_subscriptions" name="New" stroke="#2e7d32" dot={false} />
              <Line isAnimationActive={false} type="monotone" dataKey="renewed_subscriptions" name="Renewals" stroke="#ef6c00" dot={false} />
            </LineChart>
          </ChartCard>
        </Grid>
        <Grid size={{ xs: 12, lg: 6 }}>
          <Card variant="outlined">
            <CardContent>
              <Typography variant="subtitle1" component="h2" gutterBottom>
                Latest orders
              </Typography>
              <LatestOrders />
              <Box sx={{ mt: 1 }}>
                <Link to="/orders">All orders</Link>
              </Box>
            </CardContent>
          </Card>
        </Grid>
      </Grid>
    </Box>
  );
};
