/**
 * The in-run reference: a bare Express handler answering a small JSON document, started as its own
 * process the same way as the API (Node 24 through tsx, NODE_ENV=production).
 */
import express from 'express';

const app = express();
app.disable('x-powered-by');
app.get('/bare', (_req, res) => {
  res.json({ items: [{ id: '00000000-0000-4000-8000-000000000000', name: 'bare' }], pagination: { total_count: 1, max_page: 1 } });
});
const port = Number(process.env.PORT ?? 0);
const server = app.listen(port, '127.0.0.1', () => {
  console.log(`bare listening on ${JSON.stringify(server.address())}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
