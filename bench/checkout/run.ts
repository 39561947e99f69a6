/**
 * Benchmark (not a test): the purchase path end to end. Against a freshly started API and worker
 * (each its own process, started the production way), a seller's one-time product with a license-key
 * benefit is bought by 1, 10 and 50 concurrent buyers: each creates a checkout, confirms it with
 * `tok_visa`, then waits until the order is paid and the license key granted. Prints p50/p99 of
 * confirm → fulfilled, completed purchases per second, p50/p99 of the confirm request alone, and the
 * machine (cores, load); asserts nothing.
 *
 * Waiting: one watcher polls the bench database every 20 ms with a single read-only query for all
 * purchases in flight (order paid and grant granted, both committed); each purchase is then checked
 * once through the API (`GET /v1/orders/?checkout_id=` and `GET /v1/customers/{id}/state`) and its time
 * taken after that answer.
 *
 * Per purchase and level it also prints what does not depend on the machine's load (the main figures
 * on a shared machine): CPU ms of the API, the worker, the Temporal server (net of its rate in a quiet
 * window just before: the dev server is shared) and the PostgreSQL backends of the bench database
 * (/proc/<pid>/stat); SQL statements of the API and of the worker, counted by a proxy in front of
 * PostgreSQL (pg-counter.ts; `--top N` lists the N most frequent); and workflow runs, history events,
 * workflow tasks, activity tasks, local activities, signals, timers and child workflows, read from
 * the histories of the bench's namespace (temporal-count.ts). First it prints the machine, `uptime`
 * and the in-run reference: workflows of one local activity at the highest concurrency
 * (reference.ts, `--reference N`, 0 to skip), so that purchases/s can be read against it (×floor).
 * The proxy costs this process CPU (shown as `bench`): `--no-statements` leaves it out for a throughput run.
 *
 *   npx tsx bench/checkout/run.ts [--levels 1,10,50] [--purchases-per-buyer 4] [--reference 300] [--top N] [--no-statements] [--keep] [--profile DIR] [--per-request N]
 *
 * Needs PostgreSQL and Temporal (`npm start`). Never touches the development database: it runs on
 * `<database>_bench_checkout_<pid>` (migrations applied by the API at start-up, as in production) and its
 * own task queue in a Temporal namespace of its own (deleted at the end with all its runs), and drops
 * the database at the end unless --keep. It first prints how full the Temporal server was. Target:
 * p50 under 300 ms and at least 30 purchases per second. The machine may be shared: note the load.
 *
 * Measured on the 2-core machine, otherwise idle (2026-11-25): 1 buyer p50 111–132 ms, 6.4–7.2/s;
 * 10 buyers p50 0.66–0.82 s, 10.2–11.5/s; 50 buyers p50 2.7–3.2 s, 13.2–15.7/s (the lower figures
 * after charge attempts were recorded: two more statements per purchase); at 50 buyers about
 * 41 ms API, 42 ms worker, 21 ms Temporal, 23 ms PostgreSQL CPU per purchase. (2026-11-24: 206 ms 4.4/s,
 * 6–10/s, 8.1/s; earlier: 965 ms 0.8/s, 6.9 s 1.2/s, 32 s 1.2/s.) CPU-bound: see README "Throughput".
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../../api/src/config.ts';
import { deleteNamespace } from '../../infra/src/temporal-housekeeping.ts';
import { freePort, benchNamespace, secs } from '../common.ts';
import { dropDatabase, ensureDatabase } from '../../infra/src/services.ts';
import { Client, Connection } from '@temporalio/client';
import { difference, startCountingProxy, type CountingProxy, type StatementCounts } from './pg-counter.ts';
import { describeCounts, historyCounts } from './temporal-count.ts';
import { temporalFloor } from './reference.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const LEVELS = (arg('levels') ?? '1,10,50').split(',').map(Number);
const PER_BUYER = Number(arg('purchases-per-buyer') ?? 4);
const KEEP = process.argv.includes('--keep');
/** --profile DIR: the API and the worker write V8 CPU profiles (.cpuprofile) into DIR when they stop. */
const PROFILE_DIR = arg('profile');
/** --per-request N: afterwards, N sequential requests of each kind a purchase makes, with the API's CPU per request. */
const PER_REQUEST = Number(arg('per-request') ?? 0);
/** --reference N: the in-run reference, N workflows of one local activity (0: none). */
const REFERENCE = Number(arg('reference') ?? 300);
/** --no-statements: the API and the worker reach PostgreSQL directly (no counting proxy costing this process CPU); for throughput. */
const COUNT_STATEMENTS = !process.argv.includes('--no-statements');
/** --top N: the N most frequent statements of the API and the worker per level. */
const TOP = Number(arg('top') ?? 0);
/** Quiet window before each level (the shared Temporal server's own rate) and settle time after it. */
const IDLE_MS = 3000;
const SETTLE_MS = 2000;
const WATCH_MS = 20;
const FULFIL_TIMEOUT_MS = 60_000;

function startProcess(name: string, script: string, env: Record<string, string>, readyLine: string): Promise<ChildProcess> {
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(PROFILE_DIR), '--cpu-prof-name', `${name}.cpuprofile`] : [];
  const child = spawn(process.execPath, [...profile, '--import', 'tsx', script], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${out.slice(-2000)}`)), 180_000);
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-20_000);
      if (out.includes(readyLine)) {
        clearTimeout(timer);
        resolve(child);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${out.slice(-2000)}`));
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
  if (r.status !== status) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

const SCOPES = ['checkouts:read', 'checkouts:write', 'products:read', 'products:write', 'benefits:read', 'benefits:write', 'orders:read', 'customers:read', 'license_keys:read'];

/** A seller with an organization, a token, and a one-time product carrying a license-key benefit. */
async function setUp(base: string) {
  const email = `bench-${randomUUID().slice(0, 8)}@example.com`;
  const up = must(
    await api(base, null, 'POST', '/api/auth/sign-up/email', { email, password: 'correct horse battery', name: 'Bench Seller' }),
    200,
    'sign-up',
  );
  const cookie = up.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const org = must(await api(base, null, 'POST', '/v1/organizations/', { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` }, cookie), 201, 'org').body;
  const { token } = must(
    await api(base, null, 'POST', '/v1/organization-access-tokens/', { organization_id: org.id, comment: 'bench', scopes: SCOPES }, cookie),
    201,
    'token',
  ).body;
  const benefit = must(
    await api(base, token, 'POST', '/v1/benefits/', { type: 'license_keys', description: 'License', properties: { prefix: 'bench' } }),
    201,
    'benefit',
  ).body;
  const product = must(
    await api(base, token, 'POST', '/v1/products/', { name: 'Bench app', prices: [{ amount_type: 'fixed', price_amount: 2500, price_currency: 'usd' }] }),
    201,
    'product',
  ).body;
  must(await api(base, token, 'POST', `/v1/products/${product.id}/benefits`, { benefits: [benefit.id] }), 200, 'product benefits');
  return { token: token as string, productId: product.id as string, benefitId: benefit.id as string };
}

/**
 * Watches the bench database for fulfilled purchases: one query per tick for every checkout in
 * flight (its order paid and its grant of `benefitId` granted).
 */
function fulfilmentWatcher(databaseUrl: string, benefitId: string) {
  const db = new pg.Client({ connectionString: databaseUrl, application_name: 'bench-watcher' });
  db.on('error', (err) => console.error(`fulfilment watcher connection lost: ${err.message}`));
  const waiting = new Map<string, () => void>();
  let stopped = false;
  const loop = (async () => {
    await db.connect();
    while (!stopped) {
      if (waiting.size) {
        const { rows } = await db.query<{ checkout_id: string }>(
          `select o.checkout_id from orders o
             join benefit_grants g on g.order_id = o.id and g.benefit_id = $2 and g.granted_at is not null
            where o.checkout_id = any($1::uuid[]) and o.status = 'paid'`,
          [[...waiting.keys()], benefitId],
        );
        for (const r of rows) {
          waiting.get(r.checkout_id)?.();
          waiting.delete(r.checkout_id);
        }
      }
      await new Promise((r) => setTimeout(r, WATCH_MS));
    }
    await db.end();
  })();
  return {
    fulfilled: (checkoutId: string) => new Promise<void>((resolve) => waiting.set(checkoutId, resolve)),
    async stop() {
      stopped = true;
      await loop.catch((err: unknown) => console.error('fulfilment watcher failed:', err));
    },
  };
}
type Watcher = ReturnType<typeof fulfilmentWatcher>;

/** One purchase; answers the milliseconds from confirm to "order paid and license key granted" as the API shows it (null: not within the deadline). */
async function purchase(
  base: string,
  seller: { token: string; productId: string; benefitId: string },
  watcher: Watcher,
  confirmMs: number[],
): Promise<number | null> {
  const c = must(await api(base, seller.token, 'POST', '/v1/checkouts/', { product_id: seller.productId }), 201, 'checkout').body;
  const fulfilled = watcher.fulfilled(c.id);
  const t0 = performance.now();
  const confirmed = must(
    await api(base, null, 'POST', `/v1/checkouts/client/${c.client_secret}/confirm`, {
      customer_email: `buyer-${randomUUID().slice(0, 8)}@example.com`,
      customer_name: 'Bench Buyer',
      customer_billing_address: { country: 'US' },
      confirmation_token_id: 'tok_visa',
    }),
    200,
    'confirm',
  ).body;
  confirmMs.push(performance.now() - t0);
  let timer: NodeJS.Timeout | undefined;
  const inTime = await Promise.race([
    fulfilled.then(() => true),
    new Promise<boolean>((r) => (timer = setTimeout(() => r(false), FULFIL_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
  if (!inTime) return null;
  // What the seller sees through the API (committed already, so one read each).
  for (;;) {
    const orders = await api(base, seller.token, 'GET', `/v1/orders/?checkout_id=${c.id}`);
    const state = await api(base, seller.token, 'GET', `/v1/customers/${confirmed.customer_id}/state`);
    if (
      orders.body?.items?.[0]?.status === 'paid' &&
      state.body?.granted_benefits?.some((g: { benefit_id: string }) => g.benefit_id === seller.benefitId)
    ) {
      return performance.now() - t0;
    }
    if (performance.now() - t0 > FULFIL_TIMEOUT_MS) return null;
    await new Promise((r) => setTimeout(r, WATCH_MS));
  }
}

/** CPU milliseconds (user + system) a process has used so far (0 once it is gone). */
function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}
function pids(pattern: string): number[] {
  try {
    return execFileSync('pgrep', ['-f', pattern], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
const temporalPid = () => pids('temporal server start-dev')[0] ?? null;

/**
 * Where the CPU of a window goes: the API, the worker, the Temporal server, the PostgreSQL backends
 * serving the bench database (other databases' backends are other people's), and this process. The
 * Temporal server is shared: its CPU is also shown net of its rate in a quiet window before (`idle`).
 */
function cpuSampler(apiPid: number, workerPid: number, benchBackends: () => Promise<number[]>) {
  const take = async () => {
    const backends = await benchBackends();
    const tpid = temporalPid();
    return {
      at: performance.now(),
      api: cpuMs(apiPid),
      worker: cpuMs(workerPid),
      temporal: tpid ? cpuMs(tpid) : 0,
      postgres: new Map(backends.map((p) => [p, cpuMs(p)])),
      self: process.cpuUsage(),
    };
  };
  type Sample = Awaited<ReturnType<typeof take>>;
  return {
    take,
    /** CPU ms per purchase by process between two samples; `temporalIdleRate` is ms of Temporal CPU per wall ms when quiet. */
    perPurchase(from: Sample, to: Sample, purchases: number, temporalIdleRate: number) {
      let postgres = 0;
      for (const [pid, after] of to.postgres) postgres += after - (from.postgres.get(pid) ?? 0);
      const self = process.cpuUsage(from.self);
      const temporalRaw = to.temporal - from.temporal;
      const temporalNet = Math.max(0, temporalRaw - temporalIdleRate * (to.at - from.at));
      const r = {
        api: (to.api - from.api) / purchases,
        worker: (to.worker - from.worker) / purchases,
        temporal: temporalNet / purchases,
        postgres: postgres / purchases,
        bench: (self.user + self.system) / 1000 / purchases,
        temporalRaw: temporalRaw / purchases,
      };
      return { ...r, total: r.api + r.worker + r.temporal + r.postgres };
    },
  };
}

/** The API's CPU per request of each kind a purchase makes, N sequential requests each (one at a time, after a pause for the worker to settle). */
async function perRequest(base: string, seller: { token: string; productId: string }, apiPid: number, n: number, statements: CountingProxy) {
  const settle = () => new Promise((r) => setTimeout(r, 3000));
  const measure = async (what: string, fn: (i: number) => Promise<unknown>) => {
    await settle();
    const c0 = cpuMs(apiPid);
    const s0 = statements.snapshot();
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await fn(i);
    const wall = (performance.now() - t0) / n;
    const st = difference(s0, statements.snapshot());
    console.log(
      `${what.padEnd(28)} ${((cpuMs(apiPid) - c0) / n).toFixed(1).padStart(6)} ms CPU  ${wall.toFixed(1).padStart(6)} ms wall  ${(COUNT_STATEMENTS ? (st.total / n).toFixed(1) : '-').padStart(5)} statements`,
    );
  };
  const checkouts: { id: string; client_secret: string }[] = [];
  const customers: string[] = [];
  console.log(`API CPU per request (${n} sequential requests each):`);
  await measure('POST /v1/checkouts/', async () => {
    checkouts.push(must(await api(base, seller.token, 'POST', '/v1/checkouts/', { product_id: seller.productId }), 201, 'checkout').body);
  });
  await measure('POST .../confirm', async (i) => {
    const body = {
      customer_email: `probe-${randomUUID().slice(0, 8)}@example.com`,
      customer_name: 'Probe Buyer',
      customer_billing_address: { country: 'US' },
      confirmation_token_id: 'tok_visa',
    };
    customers.push(must(await api(base, null, 'POST', `/v1/checkouts/client/${checkouts[i]!.client_secret}/confirm`, body), 200, 'confirm').body.customer_id);
  });
  await measure('GET /v1/orders/?checkout_id=', (i) => api(base, seller.token, 'GET', `/v1/orders/?checkout_id=${checkouts[i]!.id}`));
  await measure('GET /v1/customers/{id}/state', (i) => api(base, seller.token, 'GET', `/v1/customers/${customers[i]}/state`));
  await measure('GET /v1/products/{id}', () => api(base, seller.token, 'GET', `/v1/products/${seller.productId}`));
  await measure('GET /healthz', () => api(base, null, 'GET', '/healthz'));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
const f1 = (n: number) => n.toFixed(1);

/** The most frequent statements of a window, per purchase. */
function topStatements(st: StatementCounts, purchases: number, n: number): string[] {
  return [...st.byText]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([text, count]) => `    ${(count / purchases).toFixed(2).padStart(6)}  ${text.length > 150 ? `${text.slice(0, 150)}…` : text}`);
}

const base = loadConfig({ ...process.env, LOG_LEVEL: 'silent' });
const dbUrl = new URL(base.DATABASE_URL);
// One database per run: two runs at once (two engineers' worktrees) would otherwise recreate the same
// database WITH (FORCE) under each other.
const benchDatabase = `${decodeURIComponent(dbUrl.pathname.slice(1))}_bench_checkout_${process.pid}`;
dbUrl.pathname = `/${benchDatabase}`;
const databaseUrl = dbUrl.toString();
const taskQueue = `bench-checkout-${randomUUID().slice(0, 8)}`;
await ensureDatabase(databaseUrl, { recreate: true });
const { used: usedStack, namespace } = await benchNamespace(base);

// The API and the worker reach PostgreSQL through counting proxies (statements per purchase).
const pgTarget = { host: dbUrl.hostname, port: Number(dbUrl.port || 5432) };
const apiStatements = await startCountingProxy(pgTarget);
const workerStatements = await startCountingProxy(pgTarget);
const viaProxy = (proxy: CountingProxy) => {
  if (!COUNT_STATEMENTS) return databaseUrl;
  const u = new URL(databaseUrl);
  u.hostname = '127.0.0.1';
  u.port = String(proxy.port);
  return u.toString();
};

const port = await freePort();
const url = `http://127.0.0.1:${port}`;
const env = { TEMPORAL_NAMESPACE: namespace, TEMPORAL_TASK_QUEUE: taskQueue, LOG_LEVEL: 'info', RATE_LIMIT_ENABLED: 'false' };
let apiProc: ChildProcess | undefined;
let workerProc: ChildProcess | undefined;
let watcher: Watcher | undefined;
const admin = new pg.Client({ connectionString: databaseUrl });
// A connection the server ends (another session dropping or restarting something) is reported by the
// next query that uses it; unhandled, the 'error' event would end the bench before its figures print.
admin.on('error', (err) => console.error(`bench database connection lost: ${err.message}`));
let temporalConnection: Connection | undefined;
try {
  // The API first: it applies the migrations at start-up.
  apiProc = await startProcess('api', 'api/src/server.ts', { ...env, DATABASE_URL: viaProxy(apiStatements), PORT: String(port), HOST: '127.0.0.1', PUBLIC_URL: url }, 'listening');
  workerProc = await startProcess('worker', 'workers/src/main.ts', { ...env, DATABASE_URL: viaProxy(workerStatements) }, 'worker started');
  await admin.connect();
  const seller = await setUp(url);
  watcher = fulfilmentWatcher(databaseUrl, seller.benefitId);
  // The backends serving the API and the worker: every backend of the bench database but the bench's own two.
  const benchBackends = async () =>
    (
      await admin.query<{ pid: number }>(
        `select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() and coalesce(application_name, '') <> 'bench-watcher'`,
        [benchDatabase],
      )
    ).rows.map((r) => r.pid);
  await purchase(url, seller, watcher, []); // warm-up (first workflow, JIT, pools)
  const cpu = cpuSampler(apiProc.pid!, workerProc.pid!, benchBackends);
  temporalConnection = await Connection.connect({ address: base.TEMPORAL_ADDRESS });
  const temporal = new Client({ connection: temporalConnection, namespace });

  const tpid = temporalPid();
  console.log(`stack before: ${usedStack}`);
  console.log(
    `machine: ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB, Node ${process.version}, ${os.platform()} ${os.release()}`,
  );
  console.log(`uptime: ${execFileSync('uptime', { encoding: 'utf8' }).trim()}`);
  // Temporal's own rate while nothing of this bench runs, before the reference: right after it the
  // server is still busy with the reference's 300 closed workflows for a while, and a window taken then
  // would be charged to the purchases' share as "idle".
  const idleBefore = await cpu.take();
  await new Promise((r) => setTimeout(r, IDLE_MS));
  const idleAfter = await cpu.take();
  const idleRateBefore = (idleAfter.temporal - idleBefore.temporal) / (idleAfter.at - idleBefore.at);
  let floor = null;
  if (REFERENCE > 0) {
    floor = await temporalFloor({
      address: base.TEMPORAL_ADDRESS,
      namespace,
      count: REFERENCE,
      concurrency: Math.max(...LEVELS),
      temporalCpuMs: () => (tpid ? cpuMs(tpid) : null),
    });
    console.log(
      `in-run reference (Temporal floor): ${REFERENCE} workflows of one local activity at concurrency ${Math.max(...LEVELS)}: ${f1(floor.perSecond)} workflows/s, ` +
        `${floor.temporalMs === null ? 'n/a' : f1(floor.temporalMs)} ms Temporal + ${f1(floor.selfMs)} ms client/worker CPU per workflow`,
    );
  }
  console.log('buyers  purchases  p50 ms  p99 ms  purchases/s  ×floor  load(1m)  unfulfilled  confirm p50/p99 ms');
  const detail: string[] = [];
  for (const level of LEVELS) {
    const total = Math.max(level * PER_BUYER, 10);
    // Temporal's own rate while this bench is quiet (others may be using the shared server).
    const q0 = await cpu.take();
    await new Promise((r) => setTimeout(r, IDLE_MS));
    const q1 = await cpu.take();
    // The lower of the two quiet windows: another user of the shared server raises both, the
    // reference's aftermath only the second.
    const temporalIdleRate = Math.min(idleRateBefore, (q1.temporal - q0.temporal) / (q1.at - q0.at));
    let next = 0;
    const latencies: number[] = [];
    let unfulfilled = 0;
    const confirmMs: number[] = [];
    const wallFrom = Date.now();
    const started = performance.now();
    const cpu0 = await cpu.take();
    const api0 = apiStatements.snapshot();
    const worker0 = workerStatements.snapshot();
    await Promise.all(
      Array.from({ length: level }, async () => {
        while (next < total) {
          next++;
          const ms = await purchase(url, seller, watcher!, confirmMs);
          if (ms === null) unfulfilled++;
          else latencies.push(ms);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    // What the purchases left running (the receipt, the outbox dispatcher) finishes in this window too.
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const cpu1 = await cpu.take();
    const wallTo = Date.now();
    const apiSt = difference(api0, apiStatements.snapshot());
    const workerSt = difference(worker0, workerStatements.snapshot());
    const c = cpu.perPurchase(cpu0, cpu1, total, temporalIdleRate);
    const sorted = latencies.sort((a, b) => b - a).reverse();
    if (!sorted.length) sorted.push(Number.NaN);
    const rate = latencies.length / seconds;
    console.log(
      `${String(level).padStart(6)}  ${String(total).padStart(9)}  ${pct(sorted, 50).toFixed(0).padStart(6)}  ${pct(sorted, 99).toFixed(0).padStart(6)}  ${rate.toFixed(1).padStart(11)}  ${(floor ? (rate / floor.perSecond).toFixed(2) : '-').padStart(6)}  ${os.loadavg()[0]!.toFixed(2).padStart(8)}  ${String(unfulfilled).padStart(11)}  ${pct(confirmMs.sort((a, b) => a - b), 50).toFixed(0)}/${pct(confirmMs, 99).toFixed(0)}`,
    );
    detail.push(
      `${level} buyers, per purchase (${total} purchases, window ${secs(wallTo - wallFrom)} incl. ${SETTLE_MS / 1000} s settle):`,
      `  CPU ms: API ${f1(c.api)}, worker ${f1(c.worker)}, Temporal ${f1(c.temporal)} (raw ${f1(c.temporalRaw)}, idle rate ${f1(temporalIdleRate * 1000)} ms/s), PostgreSQL ${f1(c.postgres)} = ${f1(c.total)} ms; bench ${f1(c.bench)}${COUNT_STATEMENTS ? ' (with the statement proxy)' : ''}`,
      COUNT_STATEMENTS
        ? `  SQL statements: API ${f1(apiSt.total / total)} (${f1(apiSt.transaction / total)} begin/commit), worker ${f1(workerSt.total / total)} (${f1(workerSt.transaction / total)} begin/commit)`
        : '  SQL statements: not counted (--no-statements)',
    );
    if (TOP > 0 && COUNT_STATEMENTS) {
      detail.push('  API statements, most frequent:', ...topStatements(apiSt, total, TOP), '  worker statements, most frequent:', ...topStatements(workerSt, total, TOP));
    }
    detail.push('  Temporal, per purchase:', ...describeCounts(await historyCounts(temporal, wallFrom, wallTo), total));
  }
  for (const line of detail) console.log(line);
  if (PER_REQUEST > 0) await perRequest(url, seller, apiProc.pid!, PER_REQUEST, apiStatements);
  console.log(
    `purchases/s counts whole purchases (checkout create + confirm + fulfilment) completed per wall-clock second; ×floor is that over the reference's workflows/s; unfulfilled: not fulfilled within ${FULFIL_TIMEOUT_MS / 1000} s.`,
  );
  console.log('CPU and statements include the bench\'s own requests per purchase (create, confirm, GET order, GET customer state); the Temporal figure is net of its quiet-window rate.');
} finally {
  await watcher?.stop();
  await stop(workerProc);
  await stop(apiProc);
  await admin.end().catch(() => {});
  await temporalConnection?.close().catch(() => {});
  await apiStatements.close();
  await workerStatements.close();
  await deleteNamespace(base.TEMPORAL_ADDRESS, namespace).catch(() => {});
  if (!KEEP) await dropDatabase(databaseUrl).catch(() => {});
}
