/**
 * Benchmark (not a test): event ingestion beside PostgreSQL COPY, and meter quantities and metrics
 * over a large table. Prints the machine, the figures and the in-run reference; asserts nothing.
 *
 *   npm run bench:ingest -- [--events 10000000] [--sample 200000] [--batch 1000] [--customers 100]
 *                           [--orders 1000000] [--runs 1000] [--keep] [--profile-api <dir>] [--only ingest] [--skip-ingest]
 *
 * `--keep` leaves the database (its name is printed at the end); `npx tsx bench/ingest-reads.ts
 * --database <name>` reruns the quantities and metrics reads on it against the current code.
 *
 * `--only ingest` runs phase 1 alone (under a minute at the default sample on a quiet machine).
 *
 * Needs PostgreSQL and Temporal (`npm start`). It never touches the development database: it creates
 * `<database>_bench_ingest_<pid>`, starts its own API process on it (the committed code, migrations
 * applied at start, LOG_LEVEL=warn) through a statement-counting proxy, and drops the database at
 * the end (unless --keep).
 *
 * 1. Ingest (`--sample` events, a meter with a filtered sum exists, so the batches are merged into
 *    its hourly rollups after they commit; that CPU is counted too): COPY FROM STDIN of the same rows into the emptied table (the reference),
 *    the same rows COPYed in batches of `--batch`, one transaction each, one at a time (the ceiling for one request in flight),
 *    the smallest HTTP server doing what any ingest endpoint must (bench/ingest-bare.ts, a child process: body, JSON.parse,
 *    shape check, one COPY, commit, 200) at 1 in flight, then
 *    POST /v1/events/ingest in batches of `--batch` with 1 and with 4 requests in flight, each
 *    from an empty table. Request bodies and COPY text are built before the clock starts (the COPY
 *    rows carry ids of the API's scheme, `events/ids.ts`, so both write the same rows). Besides
 *    throughput (load-sensitive; the load average is printed next to it): CPU ms of the API process
 *    and of its PostgreSQL backends per request, SQL statements and transactions per request, and at
 *    one in flight where a request's wall time goes (bench/ingest-timeline.ts, from the proxy).
 * 2. Bulk to `--events`: the remaining rows (same generator, in SQL: INSERT … SELECT generate_series,
 *    much faster than sending them), then the meter's rollups rebuilt from all raw events by a
 *    filter change (PATCH; the rebuild uses the per-event rollup SELECT the ingest statement uses).
 * 3. `--orders` paid orders and a tenth as many subscriptions seeded in SQL for the metrics.
 * 4. The reads, by bench/ingest-reads.ts on this database (this run's API stopped first): GET
 *    /v1/meters/{id}/quantities, 30 daily buckets, and GET /v1/metrics/, 31 daily periods, one
 *    customer and all customers: p50/p95/p99 over `--runs` sequential requests on an API started the
 *    production way straight to PostgreSQL after a warm-up, CPU ms and statements per request;
 *    quantities compared with the raw-event scan.
 */
import { seedMetricsRows } from './metrics-seed.ts';
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { arg, freePort } from './common.ts';
import { CountingProxy, cpuMs, processTree, sumCpuMs } from './ingest-measure.ts';
import { IngestTimeline } from './ingest-timeline.ts';
import { timeOrderedId } from '../api/src/modules/events/ids.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const startedAt = Date.now();

// ---- arguments -----------------------------------------------------------------------------------

const bigArg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const m = raw ? /^([\d_.]+)m$/i.exec(raw.trim()) : null;
  return m ? Math.round(Number(m[1]!.replace(/_/g, '')) * 1e6) : arg(name, fallback);
};
const N = bigArg('events', 1_000_000);
const SAMPLE = Math.min(N, bigArg('sample', 200_000));
const BATCH = arg('batch', 1000);
const CUSTOMERS = arg('customers', 100);
const ORDERS = bigArg('orders', 1_000_000);
/** `--runs`: sequential requests per read (bench/ingest-reads.ts's default when not given). */
const RUNS = arg('runs', 1000);
const RUNS_GIVEN = process.argv.some((a) => a === '--runs' || a.startsWith('--runs='));
const KEEP = process.argv.includes('--keep');
/** `--skip-ingest`: phase 1 without its API runs (the COPY reference only), then phases 2–4 (quantities and metrics). */
const SKIP_INGEST = process.argv.includes('--skip-ingest');
/** `--only ingest`: phase 1 alone (a minute or two), no bulk fill, quantities or metrics. */
const ONLY = process.argv.includes('--only') ? process.argv[process.argv.indexOf('--only') + 1] : undefined;
if (ONLY !== undefined && ONLY !== 'ingest') throw new Error(`--only: only 'ingest' is known, not ${ONLY}`);
/** `--profile-api <dir>`: the API process writes a V8 CPU profile there when it exits. */
const PROFILE_DIR = process.argv.includes('--profile-api') ? process.argv[process.argv.indexOf('--profile-api') + 1] : undefined;

// ---- the rows (the same in JavaScript for the API and COPY, and in SQL for the bulk) ---------------

const MODELS = ['gpt-4', 'gpt-3.5', 'claude'];
const DAY = 86_400_000;
const SPAN = 30 * DAY - 60_000;
const t0 = Date.now() - 30 * DAY;

const row = (i: number, customers: string[]) => ({
  name: i % 10 < 7 ? 'api.call' : 'upload',
  timestamp: new Date(t0 + Math.floor((i / N) * SPAN)).toISOString(),
  customer_id: customers[i % customers.length]!,
  metadata: { tokens: (i * 7919) % 1000, model: MODELS[i % 3]!, cached: i % 5 === 0 },
});

const BULK_SQL = `insert into "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "metadata")
  select gen_random_uuid(), now(), to_timestamp(($1::float8 + floor(g::float8 / $2::float8 * $3::float8)) / 1000),
    case when g % 10 < 7 then 'api.call' else 'upload' end, 'user', $4::uuid, ($5::uuid[])[g % $6 + 1],
    jsonb_build_object('tokens', (g * 7919) % 1000, 'model', (array['gpt-4', 'gpt-3.5', 'claude'])[g % 3 + 1], 'cached', g % 5 = 0)
  from generate_series($7::bigint, $8::bigint) g`;

// ---- helpers -------------------------------------------------------------------------------------

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const ms = (n: number) => `${n.toFixed(1)} ms`;

async function waitHealthy(url: string, child: ChildProcess, timeoutMs = 180_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API exited with ${child.exitCode}`);
    try {
      if ((await fetch(`${url}/healthz`)).ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('API did not become healthy');
}

async function http(url: string, init: RequestInit & { token?: string; cookie?: string; json?: unknown; raw?: string }) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.cookie) headers.cookie = init.cookie;
  if (init.json !== undefined || init.raw !== undefined) headers['content-type'] = 'application/json';
  const body = init.raw ?? (init.json === undefined ? undefined : JSON.stringify(init.json));
  const res = await fetch(url, { ...init, headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text.slice(0, 300)}`);
  return { res, body: text ? JSON.parse(text) : null };
}

/** COPY … FROM STDIN through pg's Submittable interface (what pg-copy-streams does), with backpressure. */
class CopyFromStdin {
  private error: Error | null = null;
  private done!: (err: Error | null) => void;
  readonly finished = new Promise<void>((resolve, reject) => {
    this.done = (err) => (err ? reject(err) : resolve());
  });
  rowCount = 0;

  constructor(
    private readonly text: string,
    private readonly chunks: Buffer[],
  ) {}

  submit(connection: any) {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: any) {
    void (async () => {
      const stream = connection.stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
      for (const chunk of this.chunks) {
        connection.sendCopyFromChunk(chunk);
        if (stream.writableNeedDrain) await new Promise((r) => stream.once('drain', r));
      }
      connection.endCopyFrom();
    })().catch((err: Error) => connection.sendCopyFail(err.message));
  }

  handleCommandComplete(msg: { text: string }) {
    this.rowCount = Number(/(\d+)$/.exec(msg.text)?.[1] ?? 0);
  }

  handleError(err: Error) {
    this.error = err;
  }

  handleReadyForQuery() {
    this.done(this.error);
  }
}

/** COPY text format: tab-separated, `\N` for NULL, backslash escapes. */
const copyField = (v: string | null) =>
  v === null ? '\\N' : v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r');

/**
 * Runs `run` against the bare ingest server (bench/ingest-bare.ts) started as a child process on the
 * bench database (through the proxy, as the API), then stops it.
 */
async function bareIngest<T>(
  databaseUrl: string,
  organizationId: string,
  run: (server: { url: string; pids: number[] }) => Promise<T>,
  mode: 'whole' | 'stream' | 'null' = 'whole',
): Promise<T> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ingest-bare.ts'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: databaseUrl, PORT: String(port), ORGANIZATION_ID: organizationId, BARE_MODE: mode },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (c: Buffer) => c.toString().includes('listening') && resolve());
      child.once('exit', (code) => reject(new Error(`bench/ingest-bare.ts exited with ${code}`)));
    });
    return await run({ url: `http://127.0.0.1:${port}`, pids: processTree(child.pid!) });
  } finally {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
  }
}

// ---- run -----------------------------------------------------------------------------------------

const cfg = loadConfig();
const benchDbUrl = new URL(cfg.DATABASE_URL);
// One database per run (two runs on one machine must not drop each other's).
benchDbUrl.pathname = `${benchDbUrl.pathname}_bench_ingest_${process.pid}`;
const dbUrl = benchDbUrl.toString();

const db = new pg.Client({ connectionString: dbUrl });
const proxy = new CountingProxy(benchDbUrl.hostname, Number(benchDbUrl.port || 5432));
const timeline = new IngestTimeline();
proxy.tap = (connection) => timeline.tapFor(connection);
let api: ChildProcess | undefined;

async function main() {
  await ensureDatabase(dbUrl, { recreate: true });
  const proxied = new URL(dbUrl);
  proxied.hostname = '127.0.0.1';
  proxied.port = String(await proxy.listen());
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  api = spawn(process.execPath, [...(PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE_DIR}`] : []), '--import', 'tsx', 'api/src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: proxied.toString(),
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: url,
      SERVE_UI: 'false',
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: `bench-${randomUUID()}`,
      // The reads phases send 600+ requests of one organization within a minute on a quiet machine.
      API_RATE_LIMIT_PER_MINUTE: '1000000',
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitHealthy(url, api);
  const apiPids = processTree(api.pid!);
  await db.connect();
  const ownPid = (await db.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  /** The API's PostgreSQL backends (every other connection to the bench database). */
  const backends = async () =>
    (await db.query<{ pid: number }>('select pid from pg_stat_activity where datname = current_database() and pid <> $1', [ownPid])).rows.map((r) => r.pid);

  /** Runs `work` (n requests) and returns per-request CPU (of `serverPids` and PostgreSQL) and statement figures. */
  const measure = async (n: number, work: () => Promise<void>, serverPids = apiPids) => {
    const before = await backends();
    const cpu0 = new Map(before.map((p) => [p, cpuMs(p)]));
    const api0 = sumCpuMs(serverPids);
    const s0 = proxy.statements;
    const x0 = proxy.transactions;
    const self0 = process.cpuUsage();
    const t = performance.now();
    await work();
    const seconds = (performance.now() - t) / 1000;
    const statements = (proxy.statements - s0) / n;
    const transactions = (proxy.transactions - x0) / n;
    const apiCpu = (sumCpuMs(serverPids) - api0) / n;
    const self = process.cpuUsage(self0);
    /** This process: the HTTP client and the statement-counting proxy, on the same cores. */
    const benchCpu = (self.user + self.system) / 1000 / n;
    const after = await backends();
    const pgCpu = after.reduce((s, p) => s + cpuMs(p) - (cpu0.get(p) ?? 0), 0) / n;
    return {
      seconds,
      statements,
      transactions,
      apiCpu,
      pgCpu,
      benchCpu,
      text: `CPU per request: API ${ms(apiCpu)}, PostgreSQL ${ms(pgCpu)}, this bench (client and proxy) ${ms(benchCpu)}; ${statements.toFixed(2)} statements and ${transactions.toFixed(2)} transactions (BEGIN) per request`,
    };
  };

  const [{ version }] = (await db.query<{ version: string }>('select version()')).rows as [{ version: string }];
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.platform()} ${os.release()}`);
  console.log(`load average at start: ${load()} (API, PostgreSQL and this client share the machine)`);
  console.log(`node ${process.version}; ${version.split(',')[0]}`);
  console.log(`events: ${fmt(N)} (ingest measured on ${fmt(SAMPLE)} in batches of ${BATCH}); ${CUSTOMERS} customers; ${fmt(ORDERS)} orders\n`);

  // A seller, a token, the customers, a product and the meter.
  const email = `bench-${randomUUID().slice(0, 8)}@example.com`;
  const signUp = await http(`${url}/api/auth/sign-up/email`, { method: 'POST', json: { email, password: 'correct horse battery', name: 'Bench' } });
  const cookie = signUp.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const { body: org } = await http(`${url}/v1/organizations/`, {
    method: 'POST',
    cookie,
    json: { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` },
  });
  const { body: tok } = await http(`${url}/v1/organization-access-tokens/`, {
    method: 'POST',
    cookie,
    json: {
      organization_id: org.id,
      comment: 'bench',
      scopes: ['events:read', 'events:write', 'meters:read', 'meters:write', 'metrics:read', 'products:read', 'products:write'],
    },
  });
  const token: string = tok.token;
  const customers = (
    await db.query<{ id: string }>(
      `insert into "customers" ("id", "created_at", "organization_id", "email", "email_verified", "external_id", "metadata")
       select gen_random_uuid(), now(), $1, 'c' || g || '@bench.local', false, 'ext-' || g, '{}'::jsonb from generate_series(1, $2) g
       returning "id"`,
      [org.id, CUSTOMERS],
    )
  ).rows.map((r) => r.id);
  const filter = {
    conjunction: 'and',
    clauses: [
      { property: 'name', operator: 'eq', value: 'api.call' },
      { property: 'cached', operator: 'eq', value: false },
    ],
  };
  const { body: meter } = await http(`${url}/v1/meters/`, {
    method: 'POST',
    token,
    json: { name: 'Uncached tokens', filter, aggregation: { func: 'sum', property: 'tokens' } },
  });

  // 1. Ingest: COPY reference, then the API at 1 and at 4 requests in flight, each from an empty table.
  const bodies: string[] = [];
  for (let b = 0; b * BATCH < SAMPLE; b++) {
    const events = [];
    for (let i = b * BATCH; i < Math.min(SAMPLE, (b + 1) * BATCH); i++) events.push(row(i, customers));
    bodies.push(JSON.stringify({ events }));
  }
  const copyChunks: Buffer[] = [];
  const now = new Date().toISOString();
  for (let start = 0; start < SAMPLE; start += BATCH) {
    let chunk = '';
    for (let i = start; i < Math.min(SAMPLE, start + BATCH); i++) {
      const r = row(i, customers);
      chunk += `${[timeOrderedId(), now, r.timestamp, r.name, 'user', org.id, r.customer_id, null, JSON.stringify(r.metadata)].map(copyField).join('\t')}\n`;
    }
    copyChunks.push(Buffer.from(chunk));
  }
  const empty = () => db.query('truncate "events", "meter_rollups"');

  const COPY_SQL =
    'copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin';
  // The ceiling at one in flight: the same rows COPYed by this client in batches of --batch, each
  // batch its own transaction (committed, so durable), one at a time: what any server that
  // acknowledges a batch once it is durable can at best do with one request in flight.
  await empty();
  const batchedCpu0 = cpuMs(ownPid);
  const batchedStarted = performance.now();
  let batchedRows = 0;
  for (const chunk of copyChunks) {
    const one = new CopyFromStdin(COPY_SQL, [chunk]);
    db.query(one);
    await one.finished;
    batchedRows += one.rowCount;
  }
  const batchedSeconds = (performance.now() - batchedStarted) / 1000;
  const batchedRate = batchedRows / batchedSeconds;
  const batchedPgCpu = ((cpuMs(ownPid) - batchedCpu0) / batchedRows) * BATCH;
  const batchedLoad = os.loadavg()[0]!;

  await empty();
  const copyCpu0 = cpuMs(ownPid);
  const copy = new CopyFromStdin(COPY_SQL, copyChunks);
  const copyStarted = performance.now();
  db.query(copy);
  await copy.finished;
  const copySeconds = (performance.now() - copyStarted) / 1000;
  const copyRate = copy.rowCount / copySeconds;
  const copyPgCpu = ((cpuMs(ownPid) - copyCpu0) / copy.rowCount) * BATCH;
  const copyLoad = os.loadavg()[0]!;

  const ingest = async (concurrency: number, server = { url, pids: apiPids }) => {
    await empty();
    timeline.reset();
    timeline.enabled = concurrency === 1;
    const latencies: number[] = [];
    let next = 0;
    let inserted = 0;
    const m = await measure(bodies.length, async () => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let b = next++; b < bodies.length; b = next++) {
            const t = performance.now();
            const { body } = await http(`${server.url}/v1/events/ingest`, { method: 'POST', token, raw: bodies[b]! });
            latencies.push(performance.now() - t);
            timeline.request(t, performance.now());
            inserted += body.inserted;
          }
        }),
      );
    }, server.pids);
    latencies.sort((a, b) => a - b);
    timeline.enabled = false;
    const breakdown = timeline.summary();
    const rate = inserted / m.seconds;
    return {
      rate,
      m,
      breakdown,
      line:
        `${fmt(inserted)} events in ${m.seconds.toFixed(1)} s = ${fmt(rate)} events/s = ${(rate / copyRate).toFixed(2)} × COPY, ${(rate / batchedRate).toFixed(2)} × batched COPY` +
        ` (request p50 ${ms(quantile(latencies, 0.5))}, p95 ${ms(quantile(latencies, 0.95))}; load average ${os.loadavg()[0]!.toFixed(2)})`,
    };
  };
  // `--skip-ingest`: no API ingest runs; the table keeps the reference COPY's rows and the bulk fill continues after them.
  if (!SKIP_INGEST) {
    const bare = await bareIngest(proxied.toString(), org.id, (server) => ingest(1, server));
    const bareStream = await bareIngest(proxied.toString(), org.id, (server) => ingest(1, server), 'stream');
    const bareNull = await bareIngest(proxied.toString(), org.id, (server) => ingest(1, server), 'null');
    const one = await ingest(1);
    const four = await ingest(4);
    console.log(`ingest of ${fmt(SAMPLE)} events (one meter, its rollups merged after commit; batches of ${BATCH})`);
    console.log(`  COPY FROM STDIN (reference)  ${fmt(copy.rowCount)} rows in ${copySeconds.toFixed(1)} s = ${fmt(copyRate)} rows/s (load average ${copyLoad.toFixed(2)})`);
    console.log(`                               PostgreSQL CPU ${ms(copyPgCpu)} per ${BATCH} rows`);
    console.log(
      `  COPY in batches of ${BATCH}, one transaction each, one at a time (the ceiling at 1 in flight)  ${fmt(batchedRows)} rows in ${batchedSeconds.toFixed(1)} s = ${fmt(batchedRate)} rows/s = ${(batchedRate / copyRate).toFixed(2)} × COPY (load average ${batchedLoad.toFixed(2)})`,
    );
    console.log(`                               PostgreSQL CPU ${ms(batchedPgCpu)} per ${BATCH} rows`);
    console.log(`  bare node:http server, 1 in flight (bench/ingest-bare.ts: JSON.parse, shape check, one COPY, commit)`);
    console.log(`                               ${bare.line}`);
    console.log(`                               ${bare.m.text.replace('API', 'server')}`);
    console.log(`                               ${bare.breakdown ?? 'wall per request: no COPY exchange seen'}`);
    console.log(`  bare node:http server streaming, 1 in flight (BARE_MODE=stream: COPY started at the headers, each event parsed and its row sent as its bytes arrive, commit at the last byte)`);
    console.log(`                               ${bareStream.line}`);
    console.log(`                               ${bareStream.m.text.replace('API', 'server')}`);
    console.log(`                               ${bareStream.breakdown ?? 'wall per request: no COPY exchange seen'}`);
    console.log(`  HTTP alone, 1 in flight (BARE_MODE=null: the same requests read and answered, no PostgreSQL)`);
    console.log(`                               ${bareNull.line.replace(/ = [\d.]+ × COPY.*? \(request/, ' (request')}`);
    console.log(`                               CPU per request: server ${ms(bareNull.m.apiCpu)}, this bench (client and proxy) ${ms(bareNull.m.benchCpu)}`);
    const perBatch = (rate: number) => ms((BATCH / rate) * 1000);
    console.log(
      `  mean ms per ${BATCH} events: COPY ${perBatch(copyRate)}, batched COPY ${perBatch(batchedRate)}, 0.9 × COPY allows ${perBatch(copyRate * 0.9)};` +
        ` HTTP alone ${perBatch(bareNull.rate)}, bare ${perBatch(bare.rate)}, bare streaming ${perBatch(bareStream.rate)}, API 1 in flight ${perBatch(one.rate)}`,
    );
    console.log(`  API, 1 request in flight     ${one.line}; ${(one.rate / bare.rate).toFixed(2)} × the bare server, ${(one.rate / bareStream.rate).toFixed(2)} × the streaming bare server`);
    console.log(`                               ${one.m.text}`);
    console.log(`                               ${one.breakdown ?? 'wall per request: no COPY exchange seen'}`);
    console.log(`  API, 4 requests in flight    ${four.line}`);
    console.log(`                               ${four.m.text}`);
    const cpuRatio = (x: typeof one) => copyPgCpu / (x.m.apiCpu + x.m.pgCpu);
    console.log(
      `  CPU-based ratio (COPY's PostgreSQL CPU per ${BATCH} rows / API + PostgreSQL CPU per request): 1 in flight ${cpuRatio(one).toFixed(2)}, 4 in flight ${cpuRatio(four).toFixed(2)}\n`,
    );
    if (ONLY === 'ingest') {
      console.log(`whole run: ${((Date.now() - startedAt) / 60_000).toFixed(1)} min; load average at the end: ${load()}`);
      return;
    }
  }

  // 2. Bulk: the rest of the rows in SQL, then the rollups rebuilt from all raw events.
  const bulkStarted = performance.now();
  for (let from = SAMPLE; from < N; from += 1_000_000) {
    const to = Math.min(N, from + 1_000_000) - 1;
    await db.query(BULK_SQL, [t0, N, SPAN, org.id, customers, customers.length, from, to]);
    process.stdout.write(`  bulk: ${fmt(to + 1)} events (${((performance.now() - bulkStarted) / 1000).toFixed(0)} s)\r`);
  }
  await db.query('analyze "events"');
  const total = Number((await db.query('select count(*) as n from "events"')).rows[0].n);
  console.log(`bulk: ${fmt(total - SAMPLE)} more events by INSERT … SELECT generate_series in ${((performance.now() - bulkStarted) / 1000).toFixed(0)} s; ${fmt(total)} events in the table`);
  const patchStarted = performance.now();
  await http(`${url}/v1/meters/${meter.id}`, {
    method: 'PATCH',
    token,
    json: { filter: { ...filter, clauses: [...filter.clauses, { property: 'tokens', operator: 'gte', value: 0 }] } },
  });
  await db.query('analyze "meter_rollups"');
  const rollupRows = Number((await db.query('select count(*) as n from "meter_rollups"')).rows[0].n);
  console.log(
    `rollups rebuilt from ${fmt(total)} raw events in ${((performance.now() - patchStarted) / 1000).toFixed(1)} s (meter filter changed, PATCH round trip): ${fmt(rollupRows)} rollup rows\n`,
  );

  // 3. Metrics data: orders and subscriptions seeded in SQL.
  const { body: product } = await http(`${url}/v1/products/`, {
    method: 'POST',
    token,
    json: { name: 'Bench plan', recurring_interval: 'month', prices: [{ amount_type: 'fixed', price_amount: 2000, price_currency: 'usd' }] },
  });
  const subs = Math.max(1, Math.floor(ORDERS / 10));
  const seedStarted = performance.now();
  // Bulk seed with the row triggers off; the metrics aggregates are then rebuilt once, set-based.
  await db.query('set session_replication_role = replica');
  await seedMetricsRows(db, { orders: ORDERS, organizationId: org.id, customers, productId: product.id, priceId: product.prices[0].id });
  await db.query('set session_replication_role = origin');
  await db.query('select metrics_rebuild()');
  // The lists' kept counts were skipped with the triggers too.
  await db.query('select list_counts_rebuild()');
  await db.query('analyze orders; analyze subscriptions; analyze metrics_order_buckets; analyze metrics_subscription_buckets; analyze metrics_customer_order_buckets; analyze metrics_customer_subscription_buckets');
  console.log(`metrics data: ${fmt(ORDERS)} orders and ${fmt(subs)} subscriptions seeded in SQL in ${((performance.now() - seedStarted) / 1000).toFixed(0)} s\n`);

  // 4. The quantities and metrics reads, measured as bench/ingest-reads.ts measures them (an API
  // started the production way, straight to PostgreSQL, warmed up; answers compared with the
  // raw-event scan). This run's API, behind the proxy, is stopped first.
  api!.kill('SIGTERM');
  await new Promise((r) => api!.once('exit', r));
  const reads = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/ingest-reads.ts', '--database', benchDbUrl.pathname.slice(1), ...(RUNS_GIVEN ? ['--runs', String(RUNS)] : []), ...(PROFILE_DIR ? ['--profile-api', PROFILE_DIR] : [])],
    { cwd: ROOT, stdio: 'inherit' },
  );
  const code = await new Promise<number | null>((r) => reads.once('exit', r));
  if (code !== 0) throw new Error(`bench/ingest-reads.ts exited with ${code}`);

  console.log(`\nwhole run: ${((Date.now() - startedAt) / 60_000).toFixed(1)} min; load average at the end: ${load()}`);
}

try {
  await main();
} finally {
  await db.end().catch(() => undefined);
  if (api && api.exitCode === null) {
    api.kill('SIGTERM');
    await new Promise((r) => api!.once('exit', r));
  }
  proxy.close();
  if (!KEEP) await dropDatabase(dbUrl).catch(() => undefined);
  else console.log(`database kept: ${benchDbUrl.pathname.slice(1)} (npx tsx bench/ingest-reads.ts --database ${benchDbUrl.pathname.slice(1)})`);
}
