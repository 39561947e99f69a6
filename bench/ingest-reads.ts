/**
 * Benchmark (not a test): the quantities and metrics reads of bench/ingest again, alone, on a
 * database an earlier `npm run bench:ingest -- --keep` left (its events, rollups, orders and
 * subscriptions), against the current code. Prints the machine and load, then per read p50/p95/p99,
 * CPU ms of the API process and of its PostgreSQL backends per request, statements per request, and
 * whether the answers equal the raw-event scan.
 *
 *   npx tsx bench/ingest-reads.ts --database <name of the kept database> [--runs 1000] [--timezone UTC] [--profile-api <dir>]
 *
 * `--timezone <zone>`: the metrics reads name their zone (`timezone=`; without it the API's default, UTC).
 * `--profile-api <dir>` writes the API process's V8 CPU profile (`--cpu-prof`) there when it exits.
 * `--api-node-flags '<flags>'` passes Node flags to the API process (e.g. `--trace-gc`: its lines print
 * between the reads' figures, so the collections during one read's runs can be counted).
 *
 * bench/ingest prints the kept database's name at the end. The database is left as it is (dropped by
 * hand: `dropdb`). Two API processes run on it (migrations applied at start): the measured one the
 * production way (NODE_ENV=production, LOG_LEVEL=info to a pipe, straight to PostgreSQL), which every
 * latency and CPU figure comes from after `WARMUP_SECONDS` of requests per read; and one through the
 * statement-counting proxy, asked `COUNT_RUNS` times per read for the statements per request only (a
 * proxy in the measured path adds two hops per statement through this process).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { initOrm } from '../api/src/kit/db.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { Meter } from '../api/src/modules/meters/entities.ts';
import { rawMeterQuantities } from '../api/src/modules/meters/service.ts';
import { arg, freePort } from './common.ts';
import { CountingProxy, cpuMs, processTree, sumCpuMs } from './ingest-measure.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const i = process.argv.indexOf('--database');
const DATABASE = i >= 0 ? process.argv[i + 1] : undefined;
if (!DATABASE) throw new Error('--database <name of a database kept by bench:ingest --keep>');
/** Sequential requests per read: a p99 of 1,000 is the 10th slowest, not the 2nd of 200. */
const RUNS = arg('runs', 1000);
const PROFILE_DIR = process.argv.includes('--profile-api') ? process.argv[process.argv.indexOf('--profile-api') + 1] : undefined;
const API_NODE_FLAGS = process.argv.includes('--api-node-flags') ? process.argv[process.argv.indexOf('--api-node-flags') + 1]!.split(/\s+/).filter(Boolean) : [];
const TIMEZONE = process.argv.includes('--timezone') ? process.argv[process.argv.indexOf('--timezone') + 1] : undefined;
const DAY = 86_400_000;
/**
 * Seconds of requests per read (autocannon, 2 connections) before the measured ones: a freshly started
 * API compiles its paths during its first thousands of requests (V8's optimizing compiler runs on
 * threads of the API process and is counted in its CPU). Measured on the meter read below: 4.2 ms of API
 * CPU per request over its requests 30-230 after a start, 1.8-2.6 ms after 3 s of this warm-up.
 */
const WARMUP_SECONDS = 3;
/** Requests per read through the counting proxy. */
const COUNT_RUNS = 10;

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const ms = (n: number) => `${n.toFixed(1)} ms`;
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');

async function call(url: string, init: { method?: string; token?: string; cookie?: string; json?: unknown }) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.cookie) headers.cookie = init.cookie;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method: init.method ?? 'GET', headers, body: init.json === undefined ? undefined : JSON.stringify(init.json) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { res, body: text ? JSON.parse(text) : null };
}

const cfg = loadConfig();
const dbUrl = new URL(cfg.DATABASE_URL);
dbUrl.pathname = `/${DATABASE}`;
const db = new pg.Client({ connectionString: dbUrl.toString() });
const proxy = new CountingProxy(dbUrl.hostname, Number(dbUrl.port || 5432));
const apis: ChildProcess[] = [];

/** An API process on `databaseUrl`, healthy; `production`: started as it is deployed (bench/reads does the same). */
async function startApi(databaseUrl: string, production: boolean): Promise<{ proc: ChildProcess; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const flags = production ? [...API_NODE_FLAGS, ...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : [])] : [];
  const env: Record<string, string> = production
    ? { NODE_ENV: 'production', SECRET: randomBytes(32).toString('hex'), LOG_LEVEL: 'info', RATE_LIMIT_ENABLED: 'true' }
    : { LOG_LEVEL: 'warn' };
  const proc = spawn(process.execPath, [...flags, '--import', 'tsx', 'api/src/server.ts'], {
    cwd: ROOT,
    env: { ...process.env, ...env, DATABASE_URL: databaseUrl, HOST: '127.0.0.1', PORT: String(port), PUBLIC_URL: url, SERVE_UI: 'false', TEMPORAL_TASK_QUEUE: `bench-reads-${process.pid}`, API_RATE_LIMIT_PER_MINUTE: '1000000' },
    // Production request lines go to a pipe this process drains, as a log shipper would read them.
    stdio: ['ignore', production ? 'pipe' : 'inherit', 'inherit'],
  });
  proc.stdout?.resume();
  apis.push(proc);
  for (let t = Date.now(); ; ) {
    if (proc.exitCode !== null) throw new Error(`API exited with ${proc.exitCode}`);
    if (await fetch(`${url}/healthz`).then((r) => r.ok, () => false)) break;
    if (Date.now() - t > 180_000) throw new Error('API did not become healthy');
    await new Promise((r) => setTimeout(r, 250));
  }
  return { proc, url };
}

async function main() {
  await db.connect();
  const proxied = new URL(dbUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(await proxy.listen());
  const counted = await startApi(proxied.toString(), false);
  const { proc: api, url } = await startApi(dbUrl.toString(), true);
  const apiPids = processTree(api.pid!);
  const ownPid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  const backends = async () =>
    (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> $1', [ownPid])).rows.map((r) => r.pid);

  // The bench's seller (its password is the bench's), its organization, customers, meter and product.
  const { email } = (await db.query<{ email: string }>(`select "email" from "users" where "email" like 'bench-%' limit 1`)).rows[0]!;
  const signIn = await call(`${counted.url}/api/auth/sign-in/email`, { method: 'POST', json: { email, password: 'correct horse battery' } });
  const cookie = signIn.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const { id: orgId } = (await db.query<{ id: string }>('select "id" from "organizations" limit 1')).rows[0]!;
  const { body: tok } = await call(`${counted.url}/v1/organization-access-tokens/`, {
    method: 'POST',
    cookie,
    json: { organization_id: orgId, comment: 'bench reads', scopes: ['events:read', 'meters:read', 'metrics:read'] },
  });
  const token: string = tok.token;
  // The bench inserted customers 1..n in order ('c' || g); customers[1] is the second.
  const customers = (await db.query<{ id: string }>(`select "id" from "customers" order by substring("email" from 2 for position('@' in "email") - 2)::int`)).rows.map((r) => r.id);
  const { id: meterId } = (await db.query<{ id: string }>('select "id" from "meters" limit 1')).rows[0]!;
  const events = Number((await db.query('select count(*) as n from "events"')).rows[0].n);
  const orders = Number((await db.query('select count(*) as n from "orders"')).rows[0].n);
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}; load average at start: ${load()}`);
  console.log(`database ${DATABASE}: ${events.toLocaleString('en-US')} events, ${orders.toLocaleString('en-US')} orders\n`);

  const latency = async (label: string, p: string, runs: number) => {
    await autocannon({ url: `${url}${p}`, connections: 2, duration: WARMUP_SECONDS, headers: { authorization: `Bearer ${token}` } });
    // The compiler's and collector's work the warm-up queued finishes before the measured requests.
    await new Promise((r) => setTimeout(r, 1000));
    if (API_NODE_FLAGS.length) console.log(`  ${label}: ${runs} runs from here`);
    const times: number[] = [];
    let last: unknown = null;
    const before = await backends();
    const cpu0 = new Map(before.map((x) => [x, cpuMs(x)]));
    const api0 = sumCpuMs(apiPids);
    for (let k = 0; k < runs; k++) {
      const t = performance.now();
      last = (await call(`${url}${p}`, { token })).body;
      times.push(performance.now() - t);
    }
    const apiCpu = (sumCpuMs(apiPids) - api0) / runs;
    const pgCpu = (await backends()).reduce((s, x) => s + cpuMs(x) - (cpu0.get(x) ?? 0), 0) / runs;
    // Its first requests prepare statements and open the pool's connections: not counted.
    for (let k = 0; k < 5; k++) await call(`${counted.url}${p}`, { token });
    const s0 = proxy.statements;
    for (let k = 0; k < COUNT_RUNS; k++) await call(`${counted.url}${p}`, { token });
    const statements = (proxy.statements - s0) / COUNT_RUNS;
    times.sort((a, b) => a - b);
    console.log(`  ${label.padEnd(14)} p50 ${ms(quantile(times, 0.5))}, p95 ${ms(quantile(times, 0.95))}, p99 ${ms(quantile(times, 0.99))} (${runs} runs; load average ${os.loadavg()[0]!.toFixed(2)})`);
    console.log(`  ${''.padEnd(14)} slowest: ${times.slice(-4).map((x) => x.toFixed(1)).join(', ')} ms`);
    console.log(`  ${''.padEnd(14)} CPU per request: API ${ms(apiCpu)}, PostgreSQL ${ms(pgCpu)}; ${statements.toFixed(2)} statements per request`);
    return last;
  };

  const rangeStart = new Date(Date.now() - 30 * DAY);
  const rangeEnd = new Date();
  const range = `start_timestamp=${rangeStart.toISOString()}&end_timestamp=${rangeEnd.toISOString()}&interval=day`;
  // The floor of a read in this run, measured the same way: a single small record.
  console.log(`GET /v1/meters/{id} (reference: one small record)`);
  await latency('the meter', `/v1/meters/${meterId}`, RUNS);
  console.log(`GET /v1/meters/{id}/quantities (30 daily buckets)`);
  const one = (await latency('one customer', `/v1/meters/${meterId}/quantities?${range}&customer_id=${customers[1]}`, RUNS)) as { quantities: unknown[] };
  const all = (await latency('all customers', `/v1/meters/${meterId}/quantities?${range}`, Math.ceil(RUNS / 2))) as { quantities: unknown[] };
  const orm = await initOrm({ DATABASE_URL: dbUrl.toString(), DATABASE_POOL_MAX: 2 } as never, allEntities);
  const compared: [string, { quantities: unknown[] }, { customerIds?: string[] }][] = [
    ['one customer', one, { customerIds: [customers[1]!] }],
    ['all customers', all, {}],
  ];
  for (const [label, answer, filters] of compared) {
    const em = orm.em.fork();
    const m = await em.findOneOrFail(Meter, meterId);
    const reference = await rawMeterQuantities(em, m, { start: rangeStart, end: rangeEnd, interval: 'day', ...filters });
    console.log(`  ${label.padEnd(14)} answers ${JSON.stringify(reference) === JSON.stringify(answer.quantities) ? 'identical to the raw-event scan' : 'DIFFER from the raw-event scan'}`);
  }
  await orm.close();
  if (orders) {
    const metricsRange = `start_date=${new Date(Date.now() - 30 * DAY).toISOString().slice(0, 10)}&end_date=${new Date().toISOString().slice(0, 10)}&interval=day${TIMEZONE ? `&timezone=${encodeURIComponent(TIMEZONE)}` : ''}`;
    console.log(`GET /v1/metrics/ (31 daily periods, 12 figures)`);
    await latency('one customer', `/v1/metrics/?${metricsRange}&customer_id=${customers[1]}`, RUNS);
    await latency('all customers', `/v1/metrics/?${metricsRange}`, Math.ceil(RUNS / 2));
  }
  console.log(`\nload average at the end: ${load()}`);
}

try {
  await main();
} finally {
  await db.end().catch(() => undefined);
  for (const api of apis) {
    if (api.exitCode !== null) continue;
    api.kill('SIGTERM');
    await new Promise((r) => api.once('exit', r));
  }
  proxy.close();
}
