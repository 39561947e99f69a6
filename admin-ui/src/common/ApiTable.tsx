/**
 * A server-paginated table for the API's nested lists that are not react-admin resources
 * (a benefit's grants, an endpoint's deliveries, a meter's events, members): `{items, pagination}`.
 */
import { useEffect, useRef, useState, type ReactNode } from 'react';
import { keepPreviousData, useQuery } from '@tanstack/react-query';
import {
  Alert,
  Box,
  LinearProgress,
  Table,
  TableBody,
  TableCell,
  TableContainer,
  TableHead,
  TablePagination,
  TableRow,
  Typography,
} from '@mui/material';
import { api, type Page } from './api.ts';

export interface Column<T> {
  label: string;
  render: (row: T) => ReactNode;
}

export function ApiTable<T extends { id: string }>({
  path,
  query = {},
  columns,
  empty = 'Nothing yet.',
  caption,
  refreshKey,
}: {
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  columns: Column<T>[];
  empty?: ReactNode;
  caption?: string;
  refreshKey?: unknown;
}) {
  const [page, setPage] = useState(0);
  const [limit, setLimit] = useState(10);
  const { data, error, isPending, isFetching, refetch } = useQuery({
    queryKey: ['api-table', path, query, page, limit],
    queryFn: ({ signal }) => api<Page<T>>(path, { query: { ...query, page: page + 1, limit }, signal }),
    placeholderData: keepPreviousData,
  });
  // A new refreshKey asks for a fresh read: started once the read in flight (if any) has answered,
  // never cancelling it, and the rows on screen stay until the new ones arrive.
  const seen = useRef(refreshKey);
  const queued = useRef(false);
  useEffect(() => {
    if (refreshKey !== seen.current) {
      seen.current = refreshKey;
      queued.current = true;
    }
    if (queued.current && !isFetching) {
      queued.current = false;
      void refetch({ cancelRefetch: false });
    }
  }, [refreshKey, isFetching, refetch]);
  if (error) return <Alert severity="error">{error.message}</Alert>;
  return (
    <Box sx={{ width: '100%' }}>
      {isFetching ? <LinearProgress aria-label="Loading" /> : null}
      {!isPending && data && !data.items.length ? (
        <Typography variant="body2" sx={{ py: 2, color: 'text.secondary' }}>
          {empty}
        </Typography>
      ) : (
        <TableContainer>
          <Table size="small" aria-label={caption}>
            <TableHead>
              <TableRow>
                {columns.map((c) => (
                  <TableCell key={c.label}>{c.label}</TableCell>
                ))}
              </TableRow>
            </TableHead>
            <TableBody>
              {(data?.items ?? []).map((row) => (
                <TableRow key={row.id}>
                  {columns.map((c) => (
                    <TableCell key={c.label}>{c.render(row)}</TableCell>
                  ))}
                </TableRow>
              ))}
            </TableBody>
          </Table>
        </TableContainer>
      )}
      {data && data.pagination.total_count > limit ? (
        <TablePagination
          component="div"
          count={data.pagination.total_count}
          page={page}
          rowsPerPage={limit}
          onPageChange={(_, p) => setPage(p)}
          onRowsPerPageChange={(e) => {
            setLimit(Number(e.target.value));
            setPage(0);
          }}
        />
      ) : null}
    </Box>
  );
}
