/**
 * The reference for bench/auth/run.ts: the `better-auth` 1.2 library itself in its own process, served
 * the documented Node way (`toNodeHandler`), on the same PostgreSQL, with the same 60 s cookie cache
 * as ours, rate limiting and logging off. Creates its schema, listens, prints `ready <url>`.
 *
 *   DATABASE_URL=postgres://… PORT=0 SECRET=… node --import tsx bench/auth/better-auth-server.ts
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { toNodeHandler } from 'better-auth/node';
import { getMigrations } from 'better-auth/db';

const DATABASE_URL = process.env.DATABASE_URL;
const SECRET = process.env.SECRET;
if (!DATABASE_URL || !SECRET) {
  console.error('DATABASE_URL and SECRET are required');
  process.exit(78);
}

const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10 });
const port = Number(process.env.PORT ?? 0);
const url = process.env.PUBLIC_URL ?? `http://127.0.0.1:${port}`;
const auth = betterAuth({
  database: pool,
  secret: SECRET,
  baseURL: url,
  emailAndPassword: { enabled: true },
  session: { cookieCache: { enabled: true, maxAge: 60 } },
  rateLimit: { enabled: false },
  logger: { disabled: true },
});
const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
const server = http.createServer(toNodeHandler(auth));
await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
console.log(`ready http://127.0.0.1:${(server.address() as AddressInfo).port}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    server.close(() => void pool.end().then(() => process.exit(0)));
    setTimeout(() => process.exit(0), 3000).unref();
  });
}
