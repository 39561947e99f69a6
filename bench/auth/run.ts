/**
 * Benchmark (not a test): the auth service beside the better-auth library itself, same machine, same
 * PostgreSQL, same load generator. Prints figures and the machine; asserts nothing.
 *
 *   npx tsx bench/auth/run.ts [--requests 2000] [--signins 60] [--concurrency 8] [--keep]
 *
 * Needs PostgreSQL and Temporal running (`npm start`). Never touches the development database: it
 * creates `<database>_bench_auth` (our migrations) and `<database>_bench_ba` (better-auth's schema),
 * and drops both at the end unless --keep.
 *
 * 1. GET /api/auth/get-session with the cookie cache (the hot path: no query) and with
 *    `disableCookieCache=true` (one session lookup), for ours and for better-auth 1.2 configured with
 *    the same 60 s cookie cache.
 * 2. POST /api/auth/sign-in/email: ours hashes with scrypt at OWASP's cost (N=2^17, r=8, p=1, 128 MiB),
 *    better-auth with its default scrypt (N=2^14, r=16, p=1, 32 MiB) — so sign-in mostly measures the
 *    password hash, and the ratio says what the stronger parameters cost.
 * Both servers run in this process (one event loop with the load generator), one at a time.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import pg from 'pg';
import { betterAuth } from 'better-auth';
import { toNodeHandler } from 'better-auth/node';
import { getMigrations } from 'better-auth/db';
import { loadConfig } from '../../api/src/config.ts';
import { createApp } from '../../api/src/app.ts';
import { closeDeps, createDeps } from '../../api/src/deps.ts';
import { initOrm, migrate } from '../../api/src/kit/db.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}
const REQUESTS = arg('requests', 2000);
const SIGNINS = arg('signins', 60);
const CONCURRENCY = arg('concurrency', 8);
const KEEP = process.argv.includes('--keep');
const PASSWORD = 'correct horse battery';
const SECRET = 'bench-secret-bench-secret-bench-secret-0123';

interface Result {
  p50: number;
  p99: number;
  rps: number;
  n: number;
}

/** `n` requests, `concurrency` in flight; latency percentiles and throughput. */
async function load(n: number, concurrency: number, fn: () => Promise<Response>): Promise<Result> {
  const times: number[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < n) {
      next++;
      const t = performance.now();
      const res = await fn();
      await res.arrayBuffer();
      if (res.status >= 400) throw new Error(`unexpected ${res.status}`);
      times.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const q = (p: number) => times[Math.min(times.length - 1, Math.floor(p * times.length))]!;
  return { p50: q(0.5), p99: q(0.99), rps: times.length / elapsed, n: times.length };
}

function cookiesOf(res: Response): string {
  return res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .filter((c) => !c.endsWith('='))
    .join('; ');
}

async function listen(handler: http.RequestListener | import('express').Express): Promise<{ url: string; server: http.Server }> {
  const server = http.createServer(handler as http.RequestListener);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** Signs a user up and returns the cookies of a fresh sign-in (token + cache). */
async function prepare(base: string): Promise<{ email: string; cookie: string }> {
  const email = `bench-${Date.now()}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const up = await fetch(`${base}/api/auth/sign-up/email`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: PASSWORD, name: 'Bench' }),
  });
  if (up.status !== 200) throw new Error(`sign-up failed: ${up.status} ${await up.text()}`);
  return { email, cookie: cookiesOf(up) };
}

async function scenario(name: string, base: string) {
  const { email, cookie } = await prepare(base);
  // Warm up both paths.
  await load(50, CONCURRENCY, () => fetch(`${base}/api/auth/get-session`, { headers: { cookie } }));
  const cached = await load(REQUESTS, CONCURRENCY, () => fetch(`${base}/api/auth/get-session`, { headers: { cookie } }));
  const uncached = await load(REQUESTS, CONCURRENCY, () =>
    fetch(`${base}/api/auth/get-session?disableCookieCache=true`, { headers: { cookie } }),
  );
  const signIn = await load(SIGNINS, CONCURRENCY, () =>
    fetch(`${base}/api/auth/sign-in/email`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: PASSWORD }),
    }),
  );
  return { name, cached, uncached, signIn };
}

const fmt = (r: Result) =>
  `p50 ${r.p50.toFixed(2).padStart(8)} ms  p99 ${r.p99.toFixed(2).padStart(8)} ms  ${r.rps.toFixed(0).padStart(6)} req/s  (n=${r.n})`;

const base = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const dbOf = (suffix: string) => {
  const u = new URL(base.DATABASE_URL);
  u.pathname = `${u.pathname}_bench_${suffix}`;
  return u.toString();
};
const oursDb = dbOf('auth');
const baDb = dbOf('ba');

console.log(
  `machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}; ` +
    `${REQUESTS} get-session requests, ${SIGNINS} sign-ins, ${CONCURRENCY} in flight`,
);

// ---- ours -----------------------------------------------------------------------------------------
await ensureDatabase(oursDb, { recreate: true });
{
  const orm = await initOrm({ DATABASE_URL: oursDb, DATABASE_POOL_MAX: 2 });
  await migrate(orm);
  await orm.close();
}
const cfg = loadConfig({
  ...process.env,
  DATABASE_URL: oursDb,
  LOG_LEVEL: 'silent',
  RATE_LIMIT_ENABLED: 'false',
  SERVE_UI: 'false',
  SECRET,
});
const deps = await createDeps(cfg, 'bench-auth');
const ours = await listen(createApp(deps));
const oursResult = await scenario('emporia', ours.url);
await new Promise((r) => ours.server.close(r));
await closeDeps(deps);

// ---- better-auth ----------------------------------------------------------------------------------
await ensureDatabase(baDb, { recreate: true });
const pool = new pg.Pool({ connectionString: baDb, max: 10 });
const baServer = http.createServer();
await new Promise<void>((r) => baServer.listen(0, '127.0.0.1', r));
const baUrl = `http://127.0.0.1:${(baServer.address() as AddressInfo).port}`;
const auth = betterAuth({
  database: pool,
  secret: SECRET,
  baseURL: baUrl,
  emailAndPassword: { enabled: true },
  session: { cookieCache: { enabled: true, maxAge: 60 } },
  rateLimit: { enabled: false },
  logger: { disabled: true },
});
const { runMigrations } = await getMigrations(auth.options);
await runMigrations();
baServer.on('request', toNodeHandler(auth));
const baResult = await scenario('better-auth 1.2', baUrl);
await new Promise((r) => baServer.close(r));
await pool.end();

// ---- report ---------------------------------------------------------------------------------------
for (const r of [oursResult, baResult]) {
  console.log(`\n${r.name}`);
  console.log(`  get-session (cookie cache)    ${fmt(r.cached)}`);
  console.log(`  get-session (no cookie cache) ${fmt(r.uncached)}`);
  console.log(`  sign-in/email                 ${fmt(r.signIn)}`);
}
const ratio = (a: number, b: number) => (a / b).toFixed(2);
console.log('\nratios emporia / better-auth (p50 latency; < 1 is faster):');
console.log(`  get-session cached ${ratio(oursResult.cached.p50, baResult.cached.p50)}, uncached ${ratio(oursResult.uncached.p50, baResult.uncached.p50)}, sign-in ${ratio(oursResult.signIn.p50, baResult.signIn.p50)}`);
console.log(
  `  cookie cache speed-up (uncached p50 / cached p50): emporia ${ratio(oursResult.uncached.p50, oursResult.cached.p50)}, ` +
    `better-auth ${ratio(baResult.uncached.p50, baResult.cached.p50)}`,
);

if (!KEEP) {
  await dropDatabase(oursDb).catch(() => {});
  await dropDatabase(baDb).catch(() => {});
}
process.exit(0);
