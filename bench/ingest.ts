/**
 * Benchmark (not a test): event ingestion throughput and meter query latency. Prints figures and
 * the machine; asserts nothing.
 *
 *   npm run bench:ingest -- [--events 1000000] [--batch 1000] [--concurrency 4] [--customers 100] [--keep]
 *
 * Needs the backing services (`npm start`, or at least PostgreSQL and Temporal). It never touches the
 * development database: it creates `<database>_bench_ingest`, starts its own API process on it (the
 * committed code, migrations applied at start, LOG_LEVEL=warn), and drops the database at the end
 * (unless --keep).
 *
 * 1. API: N events with no meter (the baseline; emptied after), then a meter exists (a filtered sum, so ingestion keeps its hourly rollups), then N events
 *    through POST /v1/events/ingest in batches (default 1000), `--concurrency` requests in flight,
 *    from an empty events table.
 * 2. GET /v1/meters/{id}/quantities latency (daily buckets over the last 30 days, a filtered sum):
 *    one customer, then every customer, from the rollups ingestion kept; the same query with the
 *    raw-scan SQL the rollups replaced (`rawMeterQuantities`, run in this process on the same
 *    database) for comparison, and its answers compared with the API's.
 * 3. Raw reference: the same N rows with PostgreSQL COPY FROM STDIN (text format) on one `pg`
 *    connection, into the same table after emptying it (and the rollups). `pg-copy-streams` is not
 *    installed, so the COPY sub-protocol is driven directly through pg's Submittable hooks
 *    (CopyInResponse → CopyData… → CopyDone), which is all that package does.
 * 4. Rebuild: the meter's filter changes, so its rollups are rebuilt from the N raw events (timed).
 */
import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { loadConfig } from '../api/src/config.ts';
import { dropDatabase, ensureDatabase } from '../infra/src/services.ts';
import { initOrm } from '../api/src/kit/db.ts';
import { allEntities } from '../api/src/modules/entities.ts';
import { Meter } from '../api/src/modules/meters/entities.ts';
import { rawMeterQuantities } from '../api/src/modules/meters/service.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

// ---- arguments -----------------------------------------------------------------------------------

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const raw = i >= 0 ? process.argv[i + 1] : process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  if (raw === undefined) return fallback;
  const m = /^([\d_.]+)([km]?)$/i.exec(raw.trim());
  if (!m) throw new Error(`--${name}: not a number: ${raw}`);
  const n = Number(m[1]!.replace(/_/g, '')) * ({ k: 1e3, m: 1e6 }[m[2]!.toLowerCase()] ?? 1);
  return Math.round(n);
}
const N = arg('events', 1_000_000);
const BATCH = arg('batch', 1000);
const CONCURRENCY = arg('concurrency', 4);
const CUSTOMERS = arg('customers', 100);
const KEEP = process.argv.includes('--keep');

// ---- the rows ------------------------------------------------------------------------------------

const MODELS = ['gpt-4', 'gpt-3.5', 'claude'];
const DAY = 86_400_000;
const t0 = Date.now() - 30 * DAY;

interface Row {
  name: string;
  timestamp: string;
  customerId: string | null;
  externalCustomerId: string | null;
  metadata: Record<string, string | number | boolean>;
}

/** Event i, the same for the API and the COPY phases: spread over the last 30 days and the customers. */
function row(i: number, customers: { id: string; ext: string }[], byExternalId: boolean): Row {
  const c = customers[i % customers.length]!;
  return {
    name: i % 10 < 7 ? 'api.call' : 'upload',
    timestamp: new Date(t0 + Math.floor((i / N) * (30 * DAY - 60_000))).toISOString(),
    customerId: byExternalId ? null : c.id,
    externalCustomerId: byExternalId ? c.ext : null,
    metadata: { tokens: (i * 7919) % 1000, model: MODELS[i % 3]!, cached: i % 5 === 0 },
  };
}

// ---- helpers -------------------------------------------------------------------------------------

const quantile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitHealthy(url: string, child: ChildProcess, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`API exited with ${child.exitCode}`);
    try {
      const res = await fetch(`${url}/healthz`);
      if (res.ok) return;
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('API did not become healthy');
}

async function http(url: string, init: RequestInit & { token?: string; cookie?: string; json?: unknown }) {
  const headers: Record<string, string> = {};
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  if (init.cookie) headers.cookie = init.cookie;
  if (init.json !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { ...init, headers, body: init.json === undefined ? init.body : JSON.stringify(init.json) });
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
    private readonly chunks: () => AsyncIterable<string>,
  ) {}

  submit(connection: any) {
    connection.query(this.text);
  }

  handleCopyInResponse(connection: any) {
    void (async () => {
      const stream = connection.stream as NodeJS.WritableStream & { writableNeedDrain?: boolean };
      for await (const chunk of this.chunks()) {
        connection.sendCopyFromChunk(Buffer.from(chunk));
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

// ---- run -----------------------------------------------------------------------------------------

const cfg = loadConfig();
const benchDbUrl = new URL(cfg.DATABASE_URL);
benchDbUrl.pathname = `${benchDbUrl.pathname}_bench_ingest`;
const dbUrl = benchDbUrl.toString();

const db = new pg.Client({ connectionString: dbUrl });
let api: ChildProcess | undefined;

async function main() {
  await ensureDatabase(dbUrl, { recreate: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  api = spawn(path.join(ROOT, 'node_modules/.bin/tsx'), ['api/src/server.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: dbUrl,
      HOST: '127.0.0.1',
      PORT: String(port),
      PUBLIC_URL: url,
      SERVE_UI: 'false',
      LOG_LEVEL: 'warn',
      TEMPORAL_TASK_QUEUE: `bench-${randomUUID()}`,
    },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  await waitHealthy(url, api);
  await db.connect();

  const [{ version }] = (await db.query<{ version: string }>('select version()')).rows as [{ version: string }];
  const cpus = os.cpus();
  console.log(`machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${os.platform()} ${os.release()}`);
  console.log(`load average at start: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} (API, PostgreSQL and this client share the machine)`);
  console.log(`node ${process.version}; ${version.split(',')[0]}`);
  console.log(`events: ${fmt(N)} in batches of ${BATCH}, ${CONCURRENCY} requests in flight; ${CUSTOMERS} customers\n`);

  // A seller, a token and the customers.
  const email = `bench-${randomUUID().slice(0, 8)}@example.com`;
  const signUp = await http(`${url}/api/auth/sign-up/email`, {
    method: 'POST',
    json: { email, password: 'correct horse battery', name: 'Bench' },
  });
  const cookie = signUp.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const { body: org } = await http(`${url}/v1/organizations/`, {
    method: 'POST',
    cookie,
    json: { name: 'Bench', slug: `bench-${randomUUID().slice(0, 8)}` },
  });
  const { body: tok } = await http(`${url}/v1/organization-access-tokens/`, {
    method: 'POST',
    cookie,
    json: { organization_id: org.id, comment: 'bench', scopes: ['events:read', 'events:write', 'meters:read', 'meters:write'] },
  });
  const token: string = tok.token;

  let customers: { id: string; ext: string }[];
  let byExternalId = false;
  try {
    const { rows } = await db.query<{ id: string; ext: string }>(
      `insert into "customers" ("id", "created_at", "organization_id", "email", "email_verified", "external_id", "metadata")
       select gen_random_uuid(), now(), $1, 'c' || g || '@bench.local', false, 'ext-' || g, '{}'::jsonb from generate_series(1, $2) g
       returning "id", "external_id" as ext`,
      [org.id, CUSTOMERS],
    );
    customers = rows;
  } catch (err) {
    console.log(`(customers could not be inserted directly: ${(err as Error).message}; events use external ids)`);
    customers = Array.from({ length: CUSTOMERS }, (_, g) => ({ id: '', ext: `ext-${g + 1}` }));
    byExternalId = true;
  }

  // 1. Through the API: first with no meter (the baseline, events emptied after), then with the
  //    meter, whose rollups the ingest statement keeps.
  const apiIngest = async () => {
    const batches = Math.ceil(N / BATCH);
    const latencies: number[] = [];
    let next = 0;
    let inserted = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let b = next++; b < batches; b = next++) {
          const events = [];
          for (let i = b * BATCH; i < Math.min(N, (b + 1) * BATCH); i++) {
            const r = row(i, customers, byExternalId);
            events.push({
              name: r.name,
              timestamp: r.timestamp,
              metadata: r.metadata,
              ...(r.customerId ? { customer_id: r.customerId } : { external_customer_id: r.externalCustomerId }),
            });
          }
          const t = performance.now();
          const { body } = await http(`${url}/v1/events/ingest`, { method: 'POST', token, json: { events } });
          latencies.push(performance.now() - t);
          inserted += body.inserted;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const line =
      `${fmt(inserted)} events in ${seconds.toFixed(1)} s = ${fmt(inserted / seconds)} events/s` +
      `  (request p50 ${quantile(latencies, 0.5).toFixed(1)} ms, p95 ${quantile(latencies, 0.95).toFixed(1)} ms per ${BATCH};` +
      ` load average ${os.loadavg()[0]!.toFixed(2)})`;
    return { inserted, rate: inserted / seconds, line };
  };
  let baseline: Awaited<ReturnType<typeof apiIngest>> | null = null;
  if (!process.argv.includes('--no-baseline')) {
    baseline = await apiIngest();
    await db.query('truncate "events"');
  }
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

  const { inserted, rate: apiRate, line: apiLine } = await apiIngest();

  // 2. Meter quantities (rollups kept by ingestion) against the raw scan they replace.
  await db.query('analyze "events"; analyze "meter_rollups"');
  console.log('ingestion');
  if (baseline) console.log(`  API, no meter                ${baseline.line}`);
  console.log(`  API, one meter (rollups)     ${apiLine}`);
  if (baseline) console.log(`  with rollups / without: ${(apiRate / baseline.rate).toFixed(2)}`);
  const rollupRows = Number((await db.query('select count(*) as n from "meter_rollups"')).rows[0].n);
  console.log(`  meter_rollups rows: ${fmt(rollupRows)}\n`);
  const rangeStart = new Date(Date.now() - 30 * DAY);
  const rangeEnd = new Date();
  const range = `start_timestamp=${rangeStart.toISOString()}&end_timestamp=${rangeEnd.toISOString()}&interval=day`;
  const customerFilter = byExternalId ? `external_customer_id=${customers[0]!.ext}` : `customer_id=${customers[0]!.id}`;
  const orm = await initOrm({ DATABASE_URL: dbUrl, DATABASE_POOL_MAX: 2 } as never, allEntities);
  const stats = (times: number[]) => {
    times.sort((a, b) => a - b);
    return `p50 ${quantile(times, 0.5).toFixed(1)} ms, p95 ${quantile(times, 0.95).toFixed(1)} ms, p99 ${quantile(times, 0.99).toFixed(1)} ms`;
  };
  const measureQuantities = async (title: string, withRaw: boolean) => {
    console.log(title);
    for (const [label, qs, runs, rawRuns, filters] of [
      ['one customer', `${range}&${customerFilter}`, 200, 20, byExternalId ? { externalCustomerIds: [customers[0]!.ext] } : { customerIds: [customers[0]!.id] }],
      ['all customers', range, 100, 5, {}],
    ] as const) {
      const times: number[] = [];
      let last: { timestamp: string; quantity: number }[] = [];
      for (let i = 0; i < runs + 3; i++) {
        const t = performance.now();
        const { body } = await http(`${url}/v1/meters/${meter.id}/quantities?${qs}`, { token });
        if (i >= 3) times.push(performance.now() - t);
        last = body.quantities;
      }
      let raw = '';
      if (withRaw) {
        const rawTimes: number[] = [];
        let reference: { timestamp: string; quantity: number }[] = [];
        for (let i = 0; i < rawRuns + 1; i++) {
          const em = orm.em.fork();
          const m = await em.findOneOrFail(Meter, meter.id);
          const t = performance.now();
          reference = await rawMeterQuantities(em, m, { start: rangeStart, end: rangeEnd, interval: 'day', ...filters });
          if (i >= 1) rawTimes.push(performance.now() - t);
        }
        const same = JSON.stringify(reference) === JSON.stringify(last);
        raw = `\n  ${''.padEnd(14)} raw scan (SQL only, ${rawRuns} runs): ${stats(rawTimes)}; answers ${same ? 'identical' : 'DIFFER'}`;
      }
      console.log(
        `  ${label.padEnd(14)} over ${fmt(inserted)} events: ${stats(times)} (${runs} runs via the API, ${last.length} buckets)${raw}`,
      );
    }
  };
  await measureQuantities('GET /v1/meters/{id}/quantities (30 daily buckets, sum over name = api.call and cached = false)', true);

  // 3. Raw COPY of the same rows into the same (emptied) table.
  await db.query('truncate "events", "meter_rollups"');
  const COPY_CHUNK = 1000;
  const copy = new CopyFromStdin(
    'copy "events" ("id", "created_at", "timestamp", "name", "source", "organization_id", "customer_id", "external_customer_id", "metadata") from stdin',
    async function* () {
      const now = new Date().toISOString();
      for (let start = 0; start < N; start += COPY_CHUNK) {
        let chunk = '';
        for (let i = start; i < Math.min(N, start + COPY_CHUNK); i++) {
          const r = row(i, customers, byExternalId);
          chunk += `${[randomUUID(), now, r.timestamp, r.name, 'user', org.id, r.customerId, r.externalCustomerId, JSON.stringify(r.metadata)]
            .map(copyField)
            .join('\t')}\n`;
        }
        yield chunk;
      }
    },
  );
  const copyStarted = performance.now();
  db.query(copy);
  await copy.finished;
  const copySeconds = (performance.now() - copyStarted) / 1000;
  const copyRate = copy.rowCount / copySeconds;
  await db.query('analyze "events"');

  console.log(`\n  raw  COPY FROM STDIN         ${fmt(copy.rowCount)} rows   in ${copySeconds.toFixed(1)} s = ${fmt(copyRate)} rows/s`);
  console.log(`  API with rollups / COPY: ${(apiRate / copyRate).toFixed(2)}${baseline ? `; API without meters / COPY: ${(baseline.rate / copyRate).toFixed(2)}` : ''}  (load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')})\n`);

  // 4. The filter changes: the rollups are rebuilt from the raw events within the PATCH.
  const patchStarted = performance.now();
  await http(`${url}/v1/meters/${meter.id}`, {
    method: 'PATCH',
    token,
    json: { filter: { ...filter, clauses: [...filter.clauses, { property: 'tokens', operator: 'gte', value: 0 }] } },
  });
  console.log(`meter filter changed: rollups rebuilt from ${fmt(copy.rowCount)} raw events in ${((performance.now() - patchStarted) / 1000).toFixed(1)} s (PATCH round trip)`);
  await db.query('analyze "meter_rollups"');
  await measureQuantities('GET /v1/meters/{id}/quantities after the rebuild (same figures expected)', false);
  await orm.close();


}

try {
  await main();
} finally {
  await db.end().catch(() => undefined);
  if (api && api.exitCode === null) {
    api.kill('SIGTERM');
    await new Promise((r) => api!.once('exit', r));
  }
  if (!KEEP) await dropDatabase(dbUrl).catch(() => undefined);
}
