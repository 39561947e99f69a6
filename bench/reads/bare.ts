/**
 * The in-run references, started as their own process the same way as the API (Node 24 through tsx,
 * NODE_ENV=production): `/bare`, a bare Express handler answering a small JSON document, and
 * `/bare-pg`, the same handler after one named prepared statement (`select 1`) on a `pg` pool of the
 * API's size (DATABASE_URL, DATABASE_POOL_MAX): the ceiling of any read that goes to PostgreSQL once;
 * `/bare-bytes/:n`, the bare handler answering a JSON document of exactly `n` bytes from memory: the
 * ceiling of a read whose body is that large (its bytes cross the loopback to the load generator); and
 * `/bare-pg-bytes/:n`, the same after the prepared `select 1`: the ceiling of any read that goes to
 * PostgreSQL once and answers that many bytes, whatever it keeps in memory.
 */
import express from 'express';
import pg from 'pg';

const app = express();
app.disable('x-powered-by');
const doc = { items: [{ id: '00000000-0000-4000-8000-000000000000', name: 'bare' }], pagination: { total_count: 1, max_page: 1 } };
app.get('/bare', (_req, res) => {
  res.json(doc);
});
const bodies = new Map<number, string>();
const bodyOf = (param: unknown): string => {
  const n = Math.max(22, Math.min(Number(param) || 0, 4_000_000));
  let body = bodies.get(n);
  if (body === undefined) bodies.set(n, (body = `{"items":[{"pad":"${'x'.repeat(n - 22)}"}]}`));
  return body;
};
app.get('/bare-bytes/:n', (req, res) => {
  res.type('application/json').send(bodyOf(req.params.n));
});
const pool = process.env.DATABASE_URL
  ? new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DATABASE_POOL_MAX ?? 10) })
  : null;
app.get('/bare-pg-bytes/:n', (req, res, next) => {
  if (!pool) return void res.status(404).json({ error: 'no DATABASE_URL' });
  const body = bodyOf(req.params.n);
  pool.query({ name: 'bare_select_1', text: 'select 1 as one' }).then(() => void res.type('application/json').send(body), next);
});
app.get('/bare-pg', (_req, res, next) => {
  if (!pool) return void res.status(404).json({ error: 'no DATABASE_URL' });
  pool.query({ name: 'bare_select_1', text: 'select 1 as one' }).then(
    (r) => res.json({ ...doc, one: r.rows[0].one }),
    next,
  );
});
const port = Number(process.env.PORT ?? 0);
const server = app.listen(port, '127.0.0.1', () => {
  console.log(`bare listening on ${JSON.stringify(server.address())}`);
});
process.once('SIGTERM', () => server.close(() => void pool?.end().finally(() => process.exit(0))));
