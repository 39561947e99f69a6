/**
 * Benchmark (not a test): read throughput of the seller API. The API is started the production way
 * (its own process, NODE_ENV=production, LOG_LEVEL=info to a pipe, rate limits on, their allowance
 * raised above what the run sends) on a database of the run's own, seeded with one organization's
 * realistic catalogue through the API (benefits; products with prices, two media and three benefits
 * each; customers) and its sales written straight into the tables (orders, subscriptions). Then, for
 * each of products, customers, orders, subscriptions and benefits: `GET` list with limit=10 and
 * limit=100 and `GET` by id, with autocannon at 10 and 50 connections, beside two references measured
 * in the same run (bench/reads/bare.ts, its own process): a bare Express handler, and the same handler
 * after one prepared `select 1` on PostgreSQL (the ceiling of a read that goes to PostgreSQL once).
 * Before that, the load-insensitive figures: the API's CPU milliseconds and SQL statements per request
 * (sequential requests; statements through a counting proxy in front of PostgreSQL,
 * bench/reads/statement-counter.ts); the throughput rows run on an API restarted without the proxy.
 *
 *   npm run bench:reads -- [--duration 5] [--connections 10,50] [--customers 1200] [--products 105]
 *                          [--per-request 200] [--only products,orders] [--profile DIR] [--keep | --reuse]
 *   npx tsx bench/reads/run.ts --url http://host:8000 --token polar_oat_…   (an API already running:
 *                          throughput only, on that organization's data)
 *
 * Needs PostgreSQL and Temporal (`npm start`); never touches the development database
 * (`<database>_bench_reads`, dropped at the end unless --keep; a Temporal namespace of its own).
 * `--keep` also writes the seeded organization's token to `.ci/out/bench-reads-kept.json`, and
 * `--reuse` runs on that kept database and organization without seeding again (and keeps it).
 * Targets: ≥ 2,000 req/s at 10 connections, p99 < 25 ms, ≥ 0.3× bare, limit=100 under 10 ms p50.
 * Results and the load they were taken under: docs/performance.md "Reads".
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../../api/src/config.ts';
import { deleteNamespace } from '../../infra/src/temporal-housekeeping.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { arg, freePort, benchNamespace, pool } from '../common.ts';
import { startStatementCounter, type StatementCounter } from './statement-counter.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const str = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
};
const DURATION = arg('duration', 5);
const LEVELS = (str('connections') ?? '10,50').split(',').map(Number);
const CUSTOMERS = arg('customers', 1200);
const PRODUCTS = arg('products', 105);
const BENEFITS = arg('benefits', 110);
const ORDERS = arg('orders', 3000);
const PER_REQUEST = arg('per-request', 200);
const ONLY = str('only')?.split(',');
const PROFILE_DIR = str('profile');
const REUSE = process.argv.includes('--reuse');
const KEEP = REUSE || process.argv.includes('--keep');
/** Where `--keep` leaves the seeded organization for `--reuse`. */
const KEPT_FILE = path.join(ROOT, '.ci/out/bench-reads-kept.json');
const GIVEN_URL = str('url');
const GIVEN_TOKEN = str('token');

const starts = new Map<string, number>();
/** Starts `script` with Node 24 through tsx; resolves once `readyLine` is printed. Output after that is read and dropped (production logs go to a pipe). */
function startProcess(name: string, script: string, env: Record<string, string>, readyLine: string): Promise<ChildProcess> {
  // One profile per start: the API's first process serves the sequential requests, its second the throughput rows.
  const n = (starts.get(name) ?? 0) + 1;
  starts.set(name, n);
  const file = n === 1 ? `${name}.cpuprofile` : `${name}-${n}.cpuprofile`;
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(PROFILE_DIR), '--cpu-prof-name', file] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let ready = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out.slice(-2000)}`)), 180_000);
    const onData = (d: Buffer) => {
      if (ready) return;
      out = (out + d.toString()).slice(-20_000);
      if (out.includes(readyLine)) {
        ready = true;
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => {
      onData(d);
      if (ready && /error/i.test(d.toString())) process.stderr.write(`[${name}] ${d.toString().slice(0, 500)}`);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!ready) reject(new Error(`${name} exited (${code}):\n${out.slice(-2000)}`));
    });
  });
}

async function stop(child: ChildProcess | undefined) {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}

/** CPU milliseconds (user + system) a process has used, from /proc. */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

async function api(base: string, token: string | null, method: string, p: string, body?: unknown, cookie?: string) {
  const res = await fetch(`${base}${p}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(cookie ? { cookie } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? (JSON.parse(text) as any) : null };
}

function must<T extends { status: number; body: any }>(r: T, status: number, what: string): T {
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 500)}`);
  return r;
}

const SCOPES = [
  'products:read',
  'products:write',
  'benefits:read',
  'benefits:write',
  'customers:read',
  'customers:write',
  'orders:read',
  'subscriptions:read',
];

/** A seller, an organization and an organization access token, through the API. */
async function seller(base: string) {
  const email = `bench-reads-${randomUUID().slice(0, 8)}@example.com`;
  const up = must(
    await api(base, null, 'POST', '/api/auth/sign-up/email', { email, password: 'correct horse battery', name: 'Bench Seller' }),
    200,
    'sign-up',
  );
  const cookie = up.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const org = must(await api(base, null, 'POST', '/v1/organizations/', { name: 'Bench Reads', slug: `bench-reads-${randomUUID().slice(0, 8)}` }, cookie), 201, 'organization').body;
  const { token } = must(
    await api(base, null, 'POST', '/v1/organization-access-tokens/', { organization_id: org.id, comment: 'bench', scopes: SCOPES }, cookie),
    201,
    'token',
  ).body;
  return { organizationId: org.id as string, token: token as string };
}

/**
 * The organization's catalogue through the API (benefits, products with prices, media and benefits,
 * customers), then its sales straight into the tables: orders spread over customers and products, a
 * subscription for each customer of a recurring product.
 */
async function seed(base: string, databaseUrl: string, s: { organizationId: string; token: string }) {
  const t0 = performance.now();
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-reads-seed' });
  await db.connect();
  try {
    const benefits: string[] = [];
    await pool(Array.from({ length: BENEFITS }, (_, i) => i), 8, async (i) => {
      const b = must(
        await api(base, s.token, 'POST', '/v1/benefits/', { type: 'custom', description: `Benefit ${i + 1}: priority support`, properties: { note: `Write to support+${i}@example.com` } }),
        201,
        'benefit',
      ).body;
      benefits.push(b.id);
    });
    // Media files as the upload flow leaves them (uploaded, in the public bucket's path scheme).
    const files = Array.from({ length: PRODUCTS * 2 }, () => randomUUID());
    await db.query(
      `insert into files (id, created_at, organization_id, name, path, mime_type, size, service, checksum_etag, last_modified_at, is_uploaded, is_enabled)
       select f, now(), $1::uuid, 'cover-' || left(f::text, 6) || '.png', $1::uuid::text || '/' || f || '/product_media.png', 'image/png', 48213, 'product_media', 'etag', now(), true, true
         from unnest($2::uuid[]) f`,
      [s.organizationId, files],
    );
    const products: { id: string; priceId: string; amount: number; recurring: boolean }[] = [];
    await pool(Array.from({ length: PRODUCTS }, (_, i) => i), 8, async (i) => {
      const recurring = i % 2 === 0;
      const amount = 900 + (i % 20) * 100;
      const p = must(
        await api(base, s.token, 'POST', '/v1/products/', {
          name: `${recurring ? 'Plan' : 'Pack'} ${i + 1}`,
          description: `Everything in tier ${i + 1}, with updates and support.`,
          ...(recurring ? { recurring_interval: 'month' } : {}),
          prices: [{ amount_type: 'fixed', price_amount: amount, price_currency: 'usd' }],
          medias: files.slice(i * 2, i * 2 + 2),
          metadata: { tier: String(i + 1) },
        }),
        201,
        'product',
      ).body;
      const pick = [0, 1, 2].map((k) => benefits[(i * 3 + k) % benefits.length]!);
      must(await api(base, s.token, 'POST', `/v1/products/${p.id}/benefits`, { benefits: pick }), 200, 'product benefits');
      products.push({ id: p.id, priceId: p.prices[0].id, amount, recurring });
    });
    const customers: string[] = [];
    await pool(Array.from({ length: CUSTOMERS }, (_, i) => i), 10, async (i) => {
      const c = must(
        await api(base, s.token, 'POST', '/v1/customers/', {
          email: `customer-${i}-${randomUUID().slice(0, 6)}@example.com`,
          name: `Customer ${i}`,
          external_id: `ext-${i}`,
          billing_address: { country: 'US', line1: `${i} Main Street`, city: 'Springfield', postal_code: '12345', state: 'US-IL' },
          metadata: { plan: i % 3 ? 'pro' : 'basic' },
        }),
        201,
        'customer',
      ).body;
      customers.push(c.id);
    });
    const recurring = products.filter((p) => p.recurring);
    const subs = customers.map((c, i) => ({ id: randomUUID(), customer: c, product: recurring[i % recurring.length]! }));
    await db.query(
      `insert into subscriptions (id, created_at, modified_at, organization_id, customer_id, product_id, price_id, amount, currency, recurring_interval, status,
                                  current_period_start, current_period_end, cancel_at_period_end, started_at, metadata, pending_proration_amount)
       select s.id, now() - (s.n || ' minutes')::interval, now(), $1, s.customer, s.product, s.price, s.amount, 'usd', 'month', 'active',
              now() - interval '3 days', now() + interval '27 days', false, now() - interval '3 days', '{}', 0
         from unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::int[]) with ordinality as s(id, customer, product, price, amount, n)`,
      [s.organizationId, subs.map((x) => x.id), subs.map((x) => x.customer), subs.map((x) => x.product.id), subs.map((x) => x.product.priceId), subs.map((x) => x.product.amount)],
    );
    const orders = Array.from({ length: ORDERS }, (_, i) => {
      if (i < subs.length) {
        const sub = subs[i]!;
        return { customer: sub.customer, product: sub.product, subscription: sub.id as string | null, reason: 'subscription_create' };
      }
      const oneTime = products.filter((p) => !p.recurring);
      return { customer: customers[i % customers.length]!, product: oneTime[i % oneTime.length]!, subscription: null, reason: 'purchase' };
    });
    await db.query(
      `insert into orders (id, created_at, modified_at, organization_id, customer_id, product_id, product_price_id, subscription_id, status, billing_reason,
                           subtotal_amount, discount_amount, net_amount, tax_amount, total_amount, refunded_amount, refunded_tax_amount, currency,
                           billing_address, custom_field_data, metadata, processor_charge_id)
       select gen_random_uuid(), now() - (o.n || ' minutes')::interval, now(), $1, o.customer, o.product, o.price, o.subscription, 'paid', o.reason,
              o.amount, 0, o.amount, 0, o.amount, 0, 0, 'usd', '{"country": "US"}', '{}', '{}', 'ch_bench_' || o.n
         from unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[], $6::text[], $7::int[]) with ordinality as o(customer, product, price, subscription, reason, amount, n)`,
      [
        s.organizationId,
        orders.map((o) => o.customer),
        orders.map((o) => o.product.id),
        orders.map((o) => o.product.priceId),
        orders.map((o) => o.subscription),
        orders.map((o) => o.reason),
        orders.map((o) => o.product.amount),
      ],
    );
    await db.query('analyze');
    console.log(
      `seeded in ${((performance.now() - t0) / 1000).toFixed(0)} s: ${benefits.length} benefits, ${products.length} products (1 price, 2 media, 3 benefits each), ${customers.length} customers, ${subs.length} subscriptions, ${orders.length} orders`,
    );
  } finally {
    await db.end();
  }
}

interface Target {
  name: string;
  path: string;
}

/** The reads: list with limit=10 and limit=100 and one by id, for each resource (ids from the first page). */
async function targets(base: string, token: string): Promise<Target[]> {
  const out: Target[] = [];
  for (const r of ['products', 'customers', 'orders', 'subscriptions', 'benefits']) {
    if (ONLY && !ONLY.includes(r)) continue;
    const first = must(await api(base, token, 'GET', `/v1/${r}/?limit=100`), 200, `list ${r}`).body;
    if (first.items.length < 100) console.log(`note: only ${first.items.length} ${r}, limit=100 returns fewer rows`);
    out.push({ name: `${r} list limit=10`, path: `/v1/${r}/?limit=10` });
    out.push({ name: `${r} list limit=100`, path: `/v1/${r}/?limit=100` });
    out.push({ name: `${r} get by id`, path: `/v1/${r}/${first.items[Math.min(5, first.items.length - 1)].id}` });
  }
  return out;
}

/**
 * CPU milliseconds used so far by the PostgreSQL backends serving `databaseUrl`'s database (other
 * than this query's own), from /proc: PostgreSQL runs on this machine in the development stack.
 * Null when its processes are not visible here.
 */
async function backendCpuMs(databaseUrl: string): Promise<number | null> {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-reads-cpu' });
  await db.connect();
  try {
    const { rows } = await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()');
    let sum = 0;
    for (const { pid } of rows) {
      try {
        sum += cpuMs(pid);
      } catch {
        return null; // not visible from here (another machine or container): no PostgreSQL column
      }
    }
    return sum;
  } finally {
    await db.end();
  }
}

/**
 * API CPU ms, PostgreSQL CPU ms and SQL statements per request, over `n` sequential requests
 * (load-insensitive) after a warm-up. The requests ask for no compression (the API compresses no `/v1` response; the
 * column shows what the response carried).
 */
async function perRequest(base: string, token: string, list: Target[], apiPid: number, counter: StatementCounter | null, n: number, databaseUrl: string) {
  console.log(`\nper request (${n} sequential requests each; CPU of the API process and of the database's PostgreSQL backends from /proc, statements through the counting proxy):`);
  console.log(
    `${'read'.padEnd(28)} ${'API CPU ms'.padStart(10)} ${'PG CPU ms'.padStart(9)} ${'statements'.padStart(10)} ${'(begin/commit)'.padStart(14)} ${'bytes'.padStart(8)} ${'encoding'.padStart(8)}`,
  );
  for (const t of list) {
    // 2 s of requests first: a fresh API compiles each read's path during its first thousands of
    // requests (V8's compiler threads count in the API's CPU), which is not what a read costs.
    await cannon(`${base}${t.path}`, 2, token, 2);
    for (let i = 0; i < 20; i++) await api(base, token, 'GET', t.path);
    const p0 = await backendCpuMs(databaseUrl);
    const c0 = cpuMs(apiPid);
    const s0 = counter?.counts();
    let bytes = 0;
    let encoding = 'identity';
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${base}${t.path}`, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } });
      bytes = (await res.arrayBuffer()).byteLength;
      encoding = res.headers.get('content-encoding') ?? 'identity';
      if (res.status !== 200) throw new Error(`${t.path}: ${res.status}`);
    }
    const cpu = (cpuMs(apiPid) - c0) / n;
    const s1 = counter?.counts();
    const p1 = await backendCpuMs(databaseUrl);
    const pgCpu = p0 !== null && p1 !== null ? ((p1 - p0) / n).toFixed(2) : '-';
    const stmts = s0 && s1 ? ((s1.total - s0.total) / n).toFixed(1) : '-';
    const tx = s0 && s1 ? ((s1.transaction - s0.transaction) / n).toFixed(1) : '-';
    console.log(
      `${t.name.padEnd(28)} ${cpu.toFixed(2).padStart(10)} ${pgCpu.padStart(9)} ${stmts.padStart(10)} ${tx.padStart(14)} ${String(bytes).padStart(8)} ${encoding.padStart(8)}`,
    );
  }
}

interface Result {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
}

async function cannon(url: string, connections: number, token: string | null, duration = DURATION): Promise<Result> {
  const r = await autocannon({
    url,
    connections,
    duration,
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors: r.non2xx + r.errors + r.timeouts };
}

async function throughput(base: string, bareUrl: string, token: string, list: Target[]) {
  console.log(`\nthroughput (autocannon, ${DURATION} s per row; × bare = req/s ÷ bare Express req/s, × bare+pg = ÷ bare Express with one prepared select 1, at the same connections):`);
  console.log(`${'read'.padEnd(28)} ${'conns'.padStart(5)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'× bare'.padStart(7)} ${'× bare+pg'.padStart(10)} ${'non-2xx'.padStart(8)} ${'load 1m'.padStart(8)}`);
  const row = (name: string, c: number, r: Result, bare: number, barePg: number) =>
    console.log(
      `${name.padEnd(28)} ${String(c).padStart(5)} ${r.rps.toFixed(0).padStart(8)} ${String(r.p50).padStart(7)} ${String(r.p99).padStart(7)} ${(r.rps / bare).toFixed(2).padStart(7)} ${(r.rps / barePg).toFixed(2).padStart(10)} ${String(r.errors).padStart(8)} ${os.loadavg()[0]!.toFixed(2).padStart(8)}`,
    );
  for (const c of LEVELS) {
    await cannon(`${bareUrl}/bare`, c, null); // warm-up
    const bare = await cannon(`${bareUrl}/bare`, c, null);
    await cannon(`${bareUrl}/bare-pg`, c, null); // warm-up (prepares the statement on each connection)
    const barePg = await cannon(`${bareUrl}/bare-pg`, c, null);
    row('bare Express', c, bare, bare.rps, barePg.rps);
    row('bare Express + select 1', c, barePg, bare.rps, barePg.rps);
    for (const t of list) {
      // A second unrecorded first: each read's code paths are compiled and its statements prepared on
      // every pool connection before it is measured (the first row ran on a cold API otherwise).
      await cannon(`${base}${t.path}`, c, token, 1);
      const r = await cannon(`${base}${t.path}`, c, token);
      row(t.name, c, r, bare.rps, barePg.rps);
      // Requests still in flight when autocannon stopped must not count against the next row.
      const last = await fetch(`${base}${t.path}`, { headers: { authorization: `Bearer ${token}`, 'accept-encoding': 'identity' } });
      const bytes = (await last.arrayBuffer()).byteLength;
      if (bytes > 10_000) {
        // The same handler as `bare` with a body of this read's size: what its bytes alone allow.
        const same = await cannon(`${bareUrl}/bare-bytes/${bytes}`, c, null);
        row(`  bare, ${Math.round(bytes / 1000)} KB body`, c, same, bare.rps, barePg.rps);
        console.log(`${''.padEnd(28)}       ${(r.rps / same.rps).toFixed(2).padStart(8)} × bare with the same body size`);
        // And after one prepared select 1: what any read that goes to PostgreSQL once and answers these bytes allows.
        await cannon(`${bareUrl}/bare-pg-bytes/${bytes}`, c, null, 1);
        const samePg = await cannon(`${bareUrl}/bare-pg-bytes/${bytes}`, c, null);
        row(`  bare + select 1, ${Math.round(bytes / 1000)} KB`, c, samePg, bare.rps, barePg.rps);
      }
    }
  }
}

const machine = () =>
  `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'unknown'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;

const procs: ChildProcess[] = [];
let counter: StatementCounter | null = null;
let cleanup = async () => {};
try {
  const barePort = await freePort();
  const bareUrl = `http://127.0.0.1:${barePort}`;
  const startBare = async (databaseUrl: string) =>
    procs.push(await startProcess('bare', 'bench/reads/bare.ts', { NODE_ENV: 'production', PORT: String(barePort), DATABASE_URL: databaseUrl }, 'bare listening'));
  let base: string;
  let token: string;
  let apiPid: number | null = null;
  /** Starts the API on `databaseUrl`; resolves with its process once it listens. */
  let startApi: ((databaseUrl: string) => Promise<ChildProcess>) | null = null;
  let directUrl = '';
  if (GIVEN_URL) {
    if (!GIVEN_TOKEN) throw new Error('--url needs --token (an organization access token with the read scopes)');
    base = GIVEN_URL.replace(/\/$/, '');
    token = GIVEN_TOKEN;
    await startBare(loadConfig({ ...process.env, LOG_LEVEL: 'silent' }).DATABASE_URL);
  } else {
    const cfg = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
    const dbUrl = new URL(cfg.DATABASE_URL);
    dbUrl.pathname = `/${decodeURIComponent(dbUrl.pathname.slice(1))}_bench_reads`;
    const databaseUrl = dbUrl.toString();
    directUrl = databaseUrl;
    const kept = REUSE && existsSync(KEPT_FILE) ? (JSON.parse(readFileSync(KEPT_FILE, 'utf8')) as { databaseUrl: string; token: string; organizationId: string }) : null;
    if (REUSE && kept?.databaseUrl !== databaseUrl) throw new Error(`--reuse: no kept run for ${dbUrl.pathname.slice(1)} (run once with --keep)`);
    if (!kept) await ensureDatabase(databaseUrl, { recreate: true });
    await startBare(databaseUrl);
    const { namespace } = await benchNamespace(cfg);
    cleanup = async () => {
      await deleteNamespace(cfg.TEMPORAL_ADDRESS, namespace).catch(() => {});
      if (!KEEP) await dropDatabase(databaseUrl).catch(() => {});
    };
    counter = await startStatementCounter({ host: dbUrl.hostname, port: Number(dbUrl.port || 5432) });
    const viaCounter = new URL(databaseUrl);
    viaCounter.hostname = '127.0.0.1';
    viaCounter.port = String(counter.port);
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const queue = `bench-reads-${randomUUID().slice(0, 8)}`;
    const secret = randomBytes(32).toString('hex');
    startApi = async (url: string) => {
      const p = await startProcess(
        'api',
        'api/src/server.ts',
        {
          NODE_ENV: 'production',
          SECRET: secret,
          LOG_LEVEL: 'info',
          DATABASE_URL: url,
          TEMPORAL_NAMESPACE: namespace,
          TEMPORAL_TASK_QUEUE: queue,
          PORT: String(port),
          HOST: '127.0.0.1',
          PUBLIC_URL: base,
          // Limits stay on (their cost is part of every request), the allowance above what the run sends.
          RATE_LIMIT_ENABLED: 'true',
          API_RATE_LIMIT_PER_MINUTE: '100000000',
          API_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000',
        },
        'api listening',
      );
      procs.push(p);
      return p;
    };
    const apiProc = await startApi(viaCounter.toString());
    apiPid = apiProc.pid!;
    if (kept) token = kept.token;
    else {
      const s = await seller(base);
      token = s.token;
      await seed(base, databaseUrl, s);
      if (KEEP) {
        mkdirSync(path.dirname(KEPT_FILE), { recursive: true });
        writeFileSync(KEPT_FILE, JSON.stringify({ databaseUrl, token, organizationId: s.organizationId }));
      }
    }
  }
  console.log(`reads bench: ${machine()}`);
  console.log(`api: ${GIVEN_URL ?? `${base} (NODE_ENV=production, LOG_LEVEL=info)`}`);
  const list = await targets(base, token);
  if (apiPid && PER_REQUEST > 0) await perRequest(base, token, list, apiPid, counter, PER_REQUEST, directUrl);
  if (startApi) {
    // Throughput without the statement-counting proxy (a hop through this process, which also runs
    // autocannon): the API restarts on a direct connection, like the bare+pg reference.
    await stop(procs.pop());
    await startApi(directUrl);
    await targets(base, token);
  }
  await throughput(base, bareUrl, token, list);
  console.log(`\nafter: load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
} finally {
  for (const p of procs.reverse()) await stop(p);
  await counter?.close();
  await cleanup();
}
